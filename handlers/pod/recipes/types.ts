/** A recipe: a preformulated set of services a pod can be made of (the spec's recipe object). */
export interface RecipeServiceConfig {
  image: string;
  container_name: string;
  environment: string[];
  volumes: string[];
  ports: string[];
  restart: 'no' | 'always' | 'on-failure' | 'unless-stopped';
}
export interface Recipe {
  name: string;
  description: string;
  images: string[];
  version: string;
  services: { service_name: string; service_config: RecipeServiceConfig }[];
}
