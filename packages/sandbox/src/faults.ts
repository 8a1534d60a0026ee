/**
 * Fault injection for `/v1` requests: error statuses (incl. 429 with `Retry-After`), latency, connection
 * resets before the request is processed, resets after it was applied (the answer is lost: the test of
 * exactly-once delivery), "fail the next N", and a rate limit per API key. Configured through
 * `POST /_sandbox/faults` (or the `faults` option of `startSandbox`).
 */
import { badField, HttpProblem } from './problem.ts';
import { RateLimiter } from './rate-limit.ts';
import type { Body } from './validate.ts';

/**
 * The fault configuration, in the wire shape of `POST /_sandbox/faults`.
 * @example
 * ```ts
 * const faults: Partial<FaultConfig> = { error_rate: 0.1, error_status: 503 };
 * ```
 */
export interface FaultConfig {
  /** Share (0..1) of requests answered with `error_status` without being processed. */
  error_rate: number;
  /** Status of injected errors. @defaultValue 503 */
  error_status: number;
  /** Share (0..1) of requests whose connection is destroyed before they are processed. */
  reset_rate: number;
  /** Share (0..1) of requests that ARE processed, then their connection is destroyed before the answer. */
  reset_after_rate: number;
  /** Delay (ms) before every `/v1` request is processed. */
  latency_ms: number;
  /**
   * `Retry-After` (seconds, 0 to {@link MAX_RETRY_AFTER_S}) sent with injected errors; injected 429s always
   * carry one (default 1).
   */
  retry_after_s: number | null;
  /** The next N `/v1` requests fail with `error_status`, before any rate applies. */
  fail_next: number;
  /**
   * At most this many `/v1` requests per second per API key (any sliding second of the sandbox clock);
   * more are answered 429 with `Retry-After`, after authentication, and not applied. `null`: no limit.
   */
  rate_limit_per_s: number | null;
}

/**
 * No faults.
 * @example
 * ```ts
 * await control.setFaults(NO_FAULTS); // same as clearFaults()
 * ```
 */
export const NO_FAULTS: Readonly<FaultConfig> = Object.freeze({
  error_rate: 0,
  error_status: 503,
  reset_rate: 0,
  reset_after_rate: 0,
  latency_ms: 0,
  retry_after_s: null,
  fail_next: 0,
  rate_limit_per_s: null,
});

/** What to do with one request. */
export interface FaultDecision {
  latencyMs: number;
  /** Destroy the connection without processing. */
  resetBefore: boolean;
  /** Answer with this error without processing. */
  error: HttpProblem | null;
  /** Process, then destroy the connection instead of answering. */
  resetAfter: boolean;
}

/** No fault: what {@link FaultInjector.decide} answers when none is configured. */
export const NO_FAULT: FaultDecision = Object.freeze({
  latencyMs: 0,
  resetBefore: false,
  error: null,
  resetAfter: false,
});

function rate(body: Body, field: keyof FaultConfig): number {
  const v = body[field];
  if (v === undefined) return 0;
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw badField(field, 'must be a number from 0 to 1');
  return v;
}

function int(body: Body, field: keyof FaultConfig, min: number, max: number): number | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw badField(field, `must be an integer from ${min} to ${max}`);
  }
  return v;
}

/**
 * Highest `retry_after_s` accepted: about 31 years, the misread header of a broken proxy (a client must
 * survive it: cap the wait by what it holds back, probe before its deadlines).
 */
export const MAX_RETRY_AFTER_S = 999_999_999;

/** Highest `rate_limit_per_s` accepted (one window of this many times is kept per key). */
export const MAX_RATE_LIMIT_PER_S = 100_000;

/** Parses a `POST /_sandbox/faults` body. Unknown keys are refused (a typo would silently inject nothing). */
export function parseFaultConfig(body: Body): FaultConfig {
  for (const key of Object.keys(body)) {
    if (!Object.hasOwn(NO_FAULTS, key)) throw badField(key, 'unknown fault setting');
  }
  return {
    error_rate: rate(body, 'error_rate'),
    error_status: int(body, 'error_status', 400, 599) ?? NO_FAULTS.error_status,
    reset_rate: rate(body, 'reset_rate'),
    reset_after_rate: rate(body, 'reset_after_rate'),
    latency_ms: int(body, 'latency_ms', 0, 60_000) ?? 0,
    retry_after_s: int(body, 'retry_after_s', 0, MAX_RETRY_AFTER_S) ?? null,
    fail_next: int(body, 'fail_next', 0, 1_000_000) ?? 0,
    rate_limit_per_s: int(body, 'rate_limit_per_s', 1, MAX_RATE_LIMIT_PER_S) ?? null,
  };
}

/**
 * Holds the active fault configuration and decides, per request, which fault (if any) applies.
 *
 * @example
 * ```ts
 * const faults = new FaultInjector(Math.random);
 * faults.set({ ...NO_FAULTS, fail_next: 2, error_status: 429 });
 * faults.decide().error?.status; // 429
 * ```
 */
export class FaultInjector {
  #random: () => number;
  #config: FaultConfig = { ...NO_FAULTS };
  #active = false;
  #limiter: RateLimiter | null = null;
  constructor(random: () => number) {
    this.#random = random;
  }

  get config(): FaultConfig {
    return { ...this.#config };
  }

  /** Replaces the configuration; the rate limit starts over with empty windows. */
  set(config: FaultConfig): void {
    this.#config = { ...config };
    this.#limiter =
      config.rate_limit_per_s === null
        ? null
        : new RateLimiter(config.rate_limit_per_s, config.retry_after_s);
    this.#refresh();
  }

  /**
   * The rate-limit fault, for an authenticated request of `apiKey` at `now`: `null` when it is admitted
   * (or there is no limit), else the 429 to answer.
   */
  admit(apiKey: string, now: number): HttpProblem | null {
    return this.#limiter === null ? null : this.#limiter.admit(apiKey, now);
  }

  clear(): void {
    this.set(NO_FAULTS);
  }

  #refresh(): void {
    const c = this.#config;
    this.#active =
      c.error_rate > 0 || c.reset_rate > 0 || c.reset_after_rate > 0 || c.latency_ms > 0 || c.fail_next > 0;
  }

  #error(): HttpProblem {
    const status = this.#config.error_status;
    const retryAfter = this.#config.retry_after_s ?? (status === 429 ? 1 : null);
    const headers: Record<string, string> = retryAfter === null ? {} : { 'retry-after': String(retryAfter) };
    const detail =
      status === 429 ? 'rate limited (injected by the sandbox)' : 'fault injected by the sandbox';
    return new HttpProblem(status, detail, headers);
  }

  /** The fault for the next `/v1` request. Cheap when no fault is configured (the benchmark path). */
  decide(): FaultDecision {
    if (!this.#active) return NO_FAULT;
    const c = this.#config;
    const decision: FaultDecision = {
      latencyMs: c.latency_ms,
      resetBefore: false,
      error: null,
      resetAfter: false,
    };
    if (c.fail_next > 0) {
      c.fail_next -= 1;
      this.#refresh();
      decision.error = this.#error();
    } else if (c.reset_rate > 0 && this.#random() < c.reset_rate) {
      decision.resetBefore = true;
    } else if (c.error_rate > 0 && this.#random() < c.error_rate) {
      decision.error = this.#error();
    } else if (c.reset_after_rate > 0 && this.#random() < c.reset_after_rate) {
      decision.resetAfter = true;
    }
    return decision;
  }
}
