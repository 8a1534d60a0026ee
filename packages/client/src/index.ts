/**
 * @postback/client — typed client for every /v1 endpoint of the ad service: zod schemas of the wire,
 * integer micros, typed errors. Edge-safe: on runtimes other than Node the transport is the global fetch.
 */
export * from './client.ts';
export * from './errors.ts';
export * from './money.ts';
export * from './options.ts';
export type { AdServiceResources } from './resources.ts';
export * from './schemas/index.ts';
