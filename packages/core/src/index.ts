/**
 * @postback/core — runtime-agnostic heart of postback (Web Crypto and `URL` only, no `node:` imports):
 * the time windows, the click, the job model and `Outbox` interface, the Dispatcher, and click capture.
 */
export * from './capture/index.ts';
export * from './click.ts';
export * from './errors.ts';
export * from './escape-controls.ts';
export * from './parse-options.ts';
export * from './policy.ts';
export * from './queue/index.ts';
export * from './workers/index.ts';
