/**
 * The recipes shipped with the product: typed constants compiled into the route bundles (route
 * code cannot read files, and a recipe is product data that changes with a release, like code).
 * Adding one: a file here and a line in RECIPES.
 */
import { metricsExporter } from './metrics-exporter';
import { s3Gateway } from './s3-gateway';
import type { Recipe } from './types';
import { webServer } from './web-server';

export type { Recipe, RecipeServiceConfig } from './types';

export const RECIPES: readonly Recipe[] = [webServer, s3Gateway, metricsExporter];

export const recipeByName = (name: string): Recipe | undefined => RECIPES.find((r) => r.name === name);

/**
 * A recipe's services as compose services. container_name is made unique per pod
 * (`<project>-<service_name>`): two pods from one recipe would otherwise clash on the engine.
 */
export function recipeServices(r: Recipe, project: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const s of r.services) {
    const c = s.service_config;
    out[s.service_name] = {
      image: c.image,
      container_name: `${project}-${s.service_name}`,
      ...(c.environment.length ? { environment: [...c.environment] } : {}),
      ...(c.volumes.length ? { volumes: [...c.volumes] } : {}),
      ...(c.ports.length ? { ports: [...c.ports] } : {}),
      restart: c.restart,
    };
  }
  return out;
}
