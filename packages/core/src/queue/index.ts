/** The durable postback queue: job model, Outbox interface, job rules, memory outbox, Dispatcher. */
export * from './types.ts';
export * from './validation.ts';
export * from './jobs.ts';
export * from './backoff.ts';
export * from './memory-outbox.ts';
