/**
 * @postback/client — typed client for every /v1 endpoint of the ad service: zod schemas of the wire,
 * integer micros, typed errors.
 */
export * from './errors.ts';
export * from './money.ts';
export * from './schemas/index.ts';
