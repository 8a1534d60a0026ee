/** The durable postback queue: job model, Outbox interface, memory outbox, Dispatcher. */
export * from './types.ts';
