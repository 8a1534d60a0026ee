/** The durable postback queue: job model, Outbox interface, job rules, memory outbox, Dispatcher. */

export * from './accounts.ts';
export * from './backoff.ts';
export * from './batcher.ts';
export * from './call-checks.ts';
export * from './dispatcher/index.ts';
export * from './job-types.ts';
export * from './jobs.ts';
export * from './memory-outbox.ts';
export * from './operator-rules.ts';
export * from './outbox-types.ts';
export * from './refund-rules.ts';
export * from './validation.ts';
