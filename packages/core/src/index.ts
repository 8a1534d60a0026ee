/**
 * @postback/core — runtime-agnostic heart of postback (Web Crypto and `URL` only, no `node:` imports):
 * what an app uses. Click capture, the click and its windows, the job model and the `Outbox` interface,
 * the memory outbox, the Dispatcher, and their errors and defaults. What only store and tool authors need
 * (the checked store contract, claim order, transition and refund rules) is in `@postback/core/store`;
 * conformance suites are in `@postback/core/testing`.
 */

// Click capture: find the token on the landing request, keep it in a signed cookie, attach it to the order.
export { type ConfirmOrderResult, confirmClickOrder, type OrderToConfirm } from './capture/confirm.ts';
export { createClickCookieCodec } from './capture/cookie-codec.ts';
export { appendSetCookie, type SetCookieTarget } from './capture/cookie-header.ts';
export {
  type CaptureOutcome,
  type ClickCapture,
  type ClickContext,
  createClickCapture,
  keptClickOf,
} from './capture/engine.ts';
export { CaptureError } from './capture/errors.ts';
export { type PostbackFetchHandler, withPostback } from './capture/fetch.ts';
export { nodeCryptoHmac, withDefaultHmac } from './capture/hmac.ts';
export { createMemoryClickStore, type MemoryClickStoreOptions } from './capture/memory-click-store.ts';
export {
  type CaptureOptions,
  DEFAULT_ATTRIBUTION,
  DEFAULT_CLEAN_URL_STATUS,
  DEFAULT_COOKIE_NAME,
  type InvalidClickEvent,
  MIN_SECRET_LENGTH,
} from './capture/options.ts';
export { DEFAULT_CLICK_PARAM, DEFAULT_TOKEN_MAX_LENGTH, DEFAULT_TOKEN_MIN_LENGTH } from './capture/token.ts';
export {
  type ConsentStores,
  type ConsentWithdrawal,
  type WithdrawConsentResult,
  withdrawConsent,
} from './capture/withdraw.ts';

// The click, its windows, and the errors core throws.
export { type ClickStamp, type ClickStore, DEFAULT_MAX_CLOCK_SKEW_MS } from './click.ts';
export { OptionsError, OutboxClosedError, PostbackError, type PostbackErrorCode } from './errors.ts';
export {
  DAY_MS,
  DEFAULT_CONFIRM_WINDOW_MS,
  DEFAULT_CONFIRMATION_RETENTION_MS,
  DEFAULT_SAFETY_MARGIN_MS,
  deadlineOf,
  type EpochMs,
  type WindowPolicy,
} from './policy.ts';

// The job model, the Outbox interface and what it takes and returns.
// The Dispatcher: claims due jobs and delivers them through the ad-service client.
export type { BackoffOptions } from './queue/backoff.ts';
export {
  type ApiKeyResolver,
  CLOCK_SKEW_TOLERANCE_MS,
  type ConversionsClient,
  createDispatcher,
  DEFAULT_AUTH_PAUSE_MS,
  DEFAULT_BACKOFF,
  DEFAULT_BATCH_SIZE,
  DEFAULT_CAMPAIGN_NOT_S2S_PATTERN,
  DEFAULT_CONCURRENCY,
  DEFAULT_HOLD_PROBE_MS,
  DEFAULT_HOLD_STATUSES,
  DEFAULT_LEASE_MS,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_SEND_TIMEOUT_MS,
  DEFAULT_SHADOW_REFRESH_MS,
  DEFAULT_STOP_TIMEOUT_MS,
  DEFAULT_SYSTEMATIC_REFUSAL_AFTER,
  DEFAULT_WATCH_INTERVAL_MS,
  DEFAULT_WINDOW_CLOSED_PATTERN,
  DEFAULT_WORKER_VERSION,
  type DeliveryTracing,
  type Dispatcher,
  type DispatcherEventName,
  type DispatcherEvents,
  type DispatcherMetrics,
  type DispatcherOptions,
  type DispatcherState,
  dispatcherOptionsSchema,
  type RunSummary,
} from './queue/dispatcher/index.ts';
export {
  DEFAULT_PRUNE_EVERY_MS,
  DEFAULT_PRUNE_OLDER_THAN_MS,
} from './queue/dispatcher/prune-schedule.ts';
export type { HeldProblem } from './queue/held-types.ts';
export {
  type AttemptOutcome,
  type AttemptRecord,
  type ConfirmJob,
  JOB_STATES,
  type Job,
  type JobFields,
  type JobKind,
  type JobState,
  type RefundJob,
} from './queue/job-types.ts';
export {
  createMemoryOutbox,
  DEFAULT_MEMORY_ID_PREFIX,
  type MemoryOutboxOptions,
} from './queue/memory-outbox.ts';
export {
  type AccountPause,
  type ConfirmInput,
  DEFAULT_AT_RISK_WITHIN_MS,
  DEFAULT_LIST_DEAD_LIMIT,
  DEFAULT_LIST_JOBS_LIMIT,
  type EnqueueResult,
  type JobFilter,
  type ListDeadOptions,
  MAX_LIST_DEAD_LIMIT,
  MAX_LIST_JOBS_LIMIT,
  type Outbox,
  type OutboxDeadlineBucket,
  type OutboxFeatures,
  type OutboxStats,
  type PruneOptions,
  type RefundInput,
  type RefundOutcome,
  type StatsOptions,
  type WithdrawInput,
  type WithdrawOutcome,
  type WorkerBeat,
} from './queue/outbox-types.ts';
export type { OutboxShadow, ShadowScope } from './queue/shadow-types.ts';
export {
  JobValidationError,
  MAX_ACCOUNT_LENGTH,
  MAX_ORDER_ID_LENGTH,
  parseClickTime,
} from './queue/validation.ts';
export {
  type DrainOnScheduleOptions,
  drainOnSchedule,
  type ScheduledHandler,
} from './workers/drain-on-schedule.ts';
