/**
 * @postback/sandbox — a local emulator of the ad service: every `/v1` endpoint and rule of the spec, a
 * controllable clock, fault injection, and a control API under `/_sandbox/`. For tests, demos and CI.
 */

export { DEFAULT_ACCOUNT_BALANCE_MICROS } from './control/routes.ts';
export type {
  SandboxAccount,
  SandboxCampaign,
  SandboxClick,
  SandboxControl,
  SandboxConversion,
  SandboxConversionReport,
  SandboxFaultConfig,
  SandboxFaults,
  SandboxKeyName,
  SandboxKeyReport,
  SandboxKeys,
  SandboxRequestFilter,
  SandboxRequestRecord,
  SandboxRequestReport,
} from './control-client.ts';
export { createSandboxControl, SandboxControlError } from './control-client.ts';
export type { FaultConfig } from './faults.ts';
export { MAX_RATE_LIMIT_PER_S, MAX_RETRY_AFTER_S, NO_FAULTS } from './faults.ts';
export type { ResolvedSandboxOptions, SandboxOptions } from './options.ts';
export {
  DEFAULT_CLICK_PARAM,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_REQUEST_LOG_SIZE,
  DEFAULT_RETURN_WINDOW_DAYS,
  resolveSandboxOptions,
  SandboxOptionsError,
} from './options.ts';
export type { RunningSandbox } from './server.ts';
export { startSandbox } from './server.ts';
export type { Scope } from './state.ts';
export {
  CONFIRM_WINDOW_MS,
  LIVENESS_WINDOW_MS,
  SEGMENT_MIN_PAGEVIEWS,
  SEGMENT_WINDOW_MS,
} from './traffic.ts';
export type { V1Route } from './v1/routes.ts';
export { V1_ROUTES } from './v1/routes.ts';
export type { SandboxVariant } from './variants.ts';
export { EXTRA_FIELDS, HTML_404, SANDBOX_VARIANTS, UNKNOWN_ENUM_VALUES } from './variants.ts';
