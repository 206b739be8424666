/**
 * `ballast/host`: the Node host as a library (the package's `./host` export, dist/host/index.mjs).
 * createBallast is the one call an embedder needs (host, bindings, isolate, a bound fetch);
 * createHost builds the bindings and the app over the built route bundles; serve adds the HTTP
 * server with graceful shutdown (what `ballast serve` runs).
 */
export { createBallast, type Ballast, type BallastOptions } from './embed';
export { assertBindings, missingBindings } from './embed-env';
export { createHost, readManifest, type Host, type HostOptions, type ManifestEntry } from './host';
export { serve, type ServeOptions, type Serving } from './serve';
export { defaultConfig, loadConfigFile, mergeConfig, validateConfig, type HostConfig } from './config';
export { demoConfig, seedDemo } from './demo';
export { createToken, listTokens, revokeToken } from './tokens';
export type { App, AppEntry, AppOptions } from '../handlers/core/app';
export type { Env, D1Database, EventsBinding, AppEvent, ExecutionContext, Fetcher } from '../handlers/core/bindings';
export type { Vars } from '../handlers/core/vars';
export type { ConnectionInfo } from '../handlers/core/pipeline';
export type { IsolateRuntime } from './isolate/types';
