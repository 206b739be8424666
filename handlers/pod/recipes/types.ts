/** A recipe: a preformulated set of services a pod can be made of (the spec's recipe object). */
export interface RecipeServiceConfig {
  image: string;
  container_name: string;
  environment: string[];
  volumes: string[];
  ports: string[];
  restart: 'no' | 'always' | 'on-failure' | 'unless-stopped';
}

/**
 * An environment value made for each pod when the recipe is merged (a credential): a recipe never
 * ships one. `chars` characters drawn uniformly from `alphabet` by crypto.getRandomValues.
 */
export interface GeneratedEnv {
  name: string;
  chars: number;
  alphabet: string;
}

export interface RecipeService {
  service_name: string;
  service_config: RecipeServiceConfig;
  /** added to `environment` per pod; not part of the recipe object GET /pod/suggested/{name} shows */
  generated?: readonly GeneratedEnv[];
}

export interface Recipe {
  name: string;
  description: string;
  images: string[];
  version: string;
  services: RecipeService[];
}
