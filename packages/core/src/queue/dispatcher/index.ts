/** The Dispatcher: claims due jobs and delivers them through the ad-service client. */
export * from './classify.ts';
export * from './dispatcher.ts';
export type { DispatcherEventName, DispatcherEvents } from './events.ts';
export * from './options.ts';
export { DEFAULT_SHADOW_REFRESH_MS } from './shadow-options.ts';
export { CLOCK_SKEW_TOLERANCE_MS } from './skew.ts';
export type { DeliveryTracing } from './tracing.ts';
