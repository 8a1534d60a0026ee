/**
 * `@postback/core/store` — for authors of stores (an `Outbox` on another database or queue) and of tools
 * that read one (a CLI, a dashboard): what an app never needs. A store runs each call's arguments through
 * the checked store contract (`checkClaim`, `checkComplete`, …), takes due jobs in the claim order
 * (`claimTier`, `takeQuietFirsts`, `takeInTurns`, `byClaimUrgency`), builds and moves jobs with the pure transition and
 * refund rules (`newConfirmJob`, `completeJob`, `planRefund`, `refundAfterConfirm`, …), keeps attempts as
 * `appendAttempt` keeps them, and answers operators by the operator rules (`resolveJobFilter`,
 * `matchesJobFilter`, `prunableAt`, …): it only persists what these return. A tool's HTTP face (metrics,
 * the dashboard) reads each request's target and `Host` with `parseRequestTarget` and `isHostValue`,
 * which refuse rather than throw. A tracer (`DispatcherOptions.tracing`) is built on `DeliveryTrace`,
 * `RequestTrace`, `TracedRequest` and `TracedRequestEnd`. The conformance suite
 * (`describeOutbox` from `@postback/core/testing`) holds it to the same answers as the memory outbox.
 * The job model and the `Outbox` interface themselves are in the main entry, `@postback/core`.
 */

export { documented, type OptionRow, renderOptionsTable } from './options-table.ts';
export { parseOptions } from './parse-options.ts';
export { refundDeadlineOf, refundSpanOf, resolvePolicy, windowPolicySchema } from './policy.ts';
export {
  type AccountQueue,
  accountFromKey,
  accountKey,
  byClaimUrgency,
  claimTier,
  DEFAULT_URGENT_WITHIN_MS,
  QUIET_MAX_PENDING,
  QUIET_SCAN,
  QUIET_WITHIN_MS,
  takeInTurns,
  takeQuietFirsts,
} from './queue/accounts.ts';
export { backoffDelay } from './queue/backoff.ts';
export { type Batcher, type BatcherOptions, type BatchHandler, createBatcher } from './queue/batcher.ts';
export {
  type CheckedClaim,
  type CheckedTransition,
  checkBeat,
  checkClaim,
  checkComplete,
  checkDuration,
  checkEpoch,
  checkExtendLease,
  checkFail,
  checkListDead,
  checkOrderLookup,
  checkPositiveInt,
  checkPurge,
  checkRelease,
  checkReleaseHeld,
  checkReplay,
  checkRetry,
  checkWorkersQuery,
} from './queue/call-checks.ts';
export {
  type ConfirmBody,
  type ConversionRequest,
  conversionRequestOf,
  type RefundBody,
} from './queue/conversion-request.ts';
export { EXPIRY_PLAUSIBLE_TOLERANCE_MS } from './queue/dispatcher/classify.ts';
export {
  type PruneSchedule,
  type RetentionRules,
  retentionRules,
  schedulePrune,
  storeReturnWindowMs,
} from './queue/dispatcher/prune-schedule.ts';
export {
  DEFAULT_ON_SWITCH,
  type OnSwitchResolver,
  onSwitchFor,
} from './queue/dispatcher/switch-options.ts';
export type {
  DeliveryTrace,
  RequestTrace,
  TracedRequest,
  TracedRequestEnd,
} from './queue/dispatcher/tracing.ts';
export type { ReleaseHeldOptions } from './queue/held-types.ts';
export {
  ATTEMPT_DETAIL_MAX_CHARS,
  ATTEMPT_HISTORY_LIMIT,
  type CampaignSource,
  type JobContext,
} from './queue/job-types.ts';
export {
  claimJob,
  completeJob,
  extendJobLease,
  failJob,
  holdsLease,
  isClaimable,
  isHeldJob,
  isReleasable,
  MAX_REASON_LENGTH,
  newConfirmJob,
  newLeaseToken,
  releaseHeldJob,
  releaseJob,
  replayJob,
  retryJob,
  truncateReason,
} from './queue/jobs.ts';
export {
  checkLedgerInput,
  finalLedgerRow,
  jobLedgerRow,
  matchesLedgerQuery,
  type ResolvedLedgerQuery,
  resolveLedgerQuery,
} from './queue/ledger.ts';
export {
  DEFAULT_LEDGER_READ_LIMIT,
  DEFAULT_LEDGER_RETENTION_MS,
  LEDGER_ACTION_KINDS,
  LEDGER_DISPATCHER_ACTOR,
  LEDGER_FINAL_KINDS,
  type LedgerEntry,
  type LedgerInput,
  type LedgerKind,
  type LedgerQuery,
  MAX_LEDGER_READ_LIMIT,
} from './queue/ledger-types.ts';
export {
  appendAttempt,
  attemptDetail,
  byHeldSince,
  byUrgency,
  countDeadline,
  heldProblemsOf,
  isAtRisk,
  isOpenJob,
  keptAttempt,
  matchesJobFilter,
  prunableAt,
  type ResolvedJobFilter,
  type ResolvedStatsOptions,
  resolveJobFilter,
  resolveStatsOptions,
  validatePruneOptions,
} from './queue/operator-rules.ts';
export type {
  ClaimOptions,
  CompleteResult,
  FailResult,
  RetryResult,
  StateCounts,
} from './queue/outbox-types.ts';
export {
  blocksRefund,
  mayHaveCharged,
  planRefund,
  type RefundContext,
  refundAfterConfirm,
} from './queue/refund-rules.ts';
export {
  isShadowDropped,
  isShadowRecorded,
  SHADOW_DROPPED_PREFIX,
  SHADOW_RECORDED_REASON,
} from './queue/shadow-mark.ts';
export {
  checkShadowEnd,
  checkShadowRecord,
  checkShadowScope,
  checkSpendReading,
  coversAccount,
  decideAtShadowEnd,
  decidedAtEnd,
  decideRecorded,
  endShadowJob,
  isShadowable,
  shadowRecordJob,
  shadowScopeKey,
  shadowSettingOf,
} from './queue/shadow-rules.ts';
export type {
  ShadowDecided,
  ShadowEndOptions,
  ShadowEndResult,
  ShadowSetting,
  SpendReading,
  SwitchDecision,
} from './queue/shadow-types.ts';
export {
  checkHeldDecision,
  checkSwitchSeen,
  decideHeldJob,
  HELD_DROPPED_PREFIX,
  heldDecisionFor,
  isDecidable,
  switchKey,
} from './queue/switch-rules.ts';
export {
  type HeldDecisionOptions,
  ON_SWITCH_VALUES,
  type OnSwitch,
  type OutboxSwitches,
  type SwitchSeen,
} from './queue/switch-types.ts';
export {
  validateAccount,
  validateCampaignId,
  validateClickToken,
  validateConfirmInput,
  validateOrderId,
  validateRefundInput,
} from './queue/validation.ts';
export {
  type CappedWait,
  capWait,
  DEFAULT_WAIT_TIMING,
  earliestProbeBy,
  expireOverdueJob,
  isOverdue,
  lastChanceAt,
  lastChanceLeadMs,
  mustGoNow,
  overdueReason,
  probeBy,
  type WaitTiming,
  waitTimingOf,
} from './queue/wait-rule.ts';
export { checkWithdraw, planWithdraw } from './queue/withdraw-rules.ts';
export { isHostValue, parseRequestTarget, type RequestTarget } from './request-target.ts';
