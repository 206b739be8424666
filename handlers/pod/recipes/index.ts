/**
 * The recipes shipped with the product: typed constants compiled into the route bundles (route
 * code cannot read files, and a recipe is product data that changes with a release, like code).
 * Adding one: a file here and a line in RECIPES.
 */
import { metricsExporter } from './metrics-exporter';
import { s3Gateway } from './s3-gateway';
import type { Recipe } from './types';
import { webServer } from './web-server';

export type { GeneratedEnv, Recipe, RecipeServiceConfig } from './types';

export const RECIPES: readonly Recipe[] = [webServer, s3Gateway, metricsExporter];

export const recipeByName = (name: string): Recipe | undefined => RECIPES.find((r) => r.name === name);

/** The recipe object the spec shows: what is generated per pod is not part of it. */
export const recipeObject = (r: Recipe): Recipe => ({
  ...r,
  services: r.services.map((s) => ({ service_name: s.service_name, service_config: s.service_config })),
});

/**
 * `chars` characters drawn uniformly from `alphabet` (at most 256) with the platform's CSPRNG;
 * bytes past the largest multiple of the alphabet's length are drawn again (no modulo bias).
 */
export function randomString(chars: number, alphabet: string): string {
  const n = alphabet.length;
  if (n < 2 || n > 256) throw new Error('randomString: alphabet of 2 to 256 characters');
  const limit = 256 - (256 % n);
  let out = '';
  while (out.length < chars) {
    for (const b of crypto.getRandomValues(new Uint8Array(Math.min(chars * 2, 1024)))) {
      if (b < limit && out.length < chars) out += alphabet[b % n];
    }
  }
  return out;
}

/**
 * A recipe's services as compose services. container_name is made unique per pod
 * (`<project>-<service_name>`): two pods from one recipe would otherwise clash on the engine.
 * Generated values (credentials) are made here, once per pod and service.
 */
export function recipeServices(r: Recipe, project: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const s of r.services) {
    const c = s.service_config;
    const environment = [
      ...c.environment,
      ...(s.generated ?? []).map((g) => `${g.name}=${randomString(g.chars, g.alphabet)}`),
    ];
    out[s.service_name] = {
      image: c.image,
      container_name: `${project}-${s.service_name}`,
      ...(environment.length ? { environment } : {}),
      ...(c.volumes.length ? { volumes: [...c.volumes] } : {}),
      ...(c.ports.length ? { ports: [...c.ports] } : {}),
      restart: c.restart,
    };
  }
  return out;
}
