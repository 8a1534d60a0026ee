/** Helpers for Cloudflare Workers: delivering from a Cron Trigger's `scheduled` event. */
export * from './drain-on-schedule.ts';
