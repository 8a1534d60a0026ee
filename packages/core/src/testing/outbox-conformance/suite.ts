/**
 * What every group of the `Outbox` conformance suite shares: the suite's constants, the outbox and clock
 * of the running test (fresh for each test, so read through getters), and the helpers the tests are
 * written with.
 */
import { expect, it, type TestContext } from 'vitest';
import { DAY_MS, type EpochMs, resolvePolicy, type WindowPolicy } from '../../policy.ts';
import type { ConfirmJob, Job, JobState } from '../../queue/job-types.ts';
import type { ConfirmInput, Outbox } from '../../queue/outbox-types.ts';
import { JobValidationError } from '../../queue/validation.ts';
import type { FakeClock } from '../fake-clock.ts';
import type { OutboxCapability } from './types.ts';

export const HOUR = 3_600_000;
export const LEASE_MS = 30_000;
/** Deliberately not the defaults: a store that ignores the policy it is given fails the deadline tests. */
export const SUITE_POLICY: WindowPolicy = resolvePolicy({
  confirmWindowMs: 7 * DAY_MS,
  safetyMarginMs: 2 * HOUR,
  returnWindowMs: 14 * DAY_MS,
});

/** The running test's outbox and clock, and the helpers the groups of tests use. */
export interface Suite {
  /** The outbox of the running test. */
  readonly outbox: Outbox;
  /** The fake clock of the running test. */
  readonly clock: FakeClock;
  /** Closes the running test's outbox and builds a fresh, empty one with `policy` (same clock). */
  reopen(policy: WindowPolicy): Promise<void>;
  /** Whether the backend has `capability`. */
  has(capability: OutboxCapability): boolean;
  /**
   * `it`, or a skip that says why when the backend lacks one of `capabilities`. `fn` gets vitest's test
   * context (a group may skip from inside, e.g. on a property of the running outbox).
   */
  test(title: string, fn: (context: TestContext) => Promise<void>, ...capabilities: OutboxCapability[]): void;
  confirmInput(orderId: string, overrides?: Partial<ConfirmInput>): ConfirmInput;
  enqueue(orderId: string, overrides?: Partial<ConfirmInput>): Promise<ConfirmJob>;
  claimAll(limit?: number, leaseMs?: number): Promise<Job[]>;
  claimOne(): Promise<Job>;
  deliver(orderId: string, campaignId?: string): Promise<ConfirmJob>;
  killConfirm(orderId: string, reason?: string): Promise<Job>;
  stateOf(id: string): Promise<JobState | undefined>;
  expectValidation(promise: Promise<unknown>, field: string): Promise<void>;
  /** The last day a reversal of something charged at `at` is accepted, minus the margin. */
  returnDeadline(at: EpochMs): EpochMs;
  /** A confirm whose only attempt may have been applied, ended `ending` at the returned time. */
  maybeAppliedConfirm(
    orderId: string,
    ending: 'dead' | 'expired',
  ): Promise<{ confirm: ConfirmJob; at: EpochMs }>;
}

/** Builds the {@link Suite} over `current`, which the suite's `beforeEach` refills for every test. */
export function createSuite(
  current: { outbox: Outbox; clock: FakeClock; reopen: (policy: WindowPolicy) => Promise<void> },
  unsupported: Partial<Record<OutboxCapability, string>>,
  timeout: number,
): Suite {
  let tokens = 0;
  const has = (capability: OutboxCapability) => unsupported[capability] === undefined;
  const s: Suite = {
    get outbox() {
      return current.outbox;
    },
    get clock() {
      return current.clock;
    },
    reopen: (policy) => current.reopen(policy),
    has,
    test(title, fn, ...capabilities) {
      const missing = capabilities.find((c) => !has(c));
      // Skipped on purpose when the backend declared it cannot do this (e.g. SQS cannot cancel a queued
      // message); the reason it gave goes into the test's title, so the report shows it.
      const shown =
        missing === undefined ? title : `${title} [unsupported ${missing}: ${unsupported[missing]}]`;
      it.skipIf(missing !== undefined)(shown, fn, timeout);
    },
    confirmInput: (orderId, overrides = {}) => ({
      orderId,
      valueMicros: 12_340_000,
      click: { token: `tok_${++tokens}_AbC-9`, clickedAt: current.clock.now() - HOUR },
      ...overrides,
    }),
    enqueue: async (orderId, overrides = {}) =>
      (await current.outbox.confirm(s.confirmInput(orderId, overrides))).job,
    claimAll: (limit = 100, leaseMs = LEASE_MS) =>
      current.outbox.claim({ now: current.clock.now(), limit, leaseMs }),
    claimOne: async () => {
      const jobs = await s.claimAll(1);
      expect(jobs).toHaveLength(1);
      return jobs[0] as Job;
    },
    deliver: async (orderId, campaignId = 'cmp_77') => {
      await s.enqueue(orderId);
      const claimed = await s.claimOne();
      expect(await current.outbox.complete(claimed, { now: current.clock.now(), campaignId })).toBe(true);
      return claimed as ConfirmJob;
    },
    killConfirm: async (orderId, reason = 'Ad service answered 404: unknown click token') => {
      await s.enqueue(orderId);
      const claimed = await s.claimOne();
      const dead = { now: current.clock.now(), state: 'dead' as const, reason };
      expect(await current.outbox.fail(claimed, dead)).toBe(true);
      return claimed;
    },
    stateOf: async (id) => (await current.outbox.get(id))?.state,
    expectValidation: async (promise, field) => {
      const err = await promise.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, `expected a JobValidationError naming ${field}`).toBeInstanceOf(JobValidationError);
      expect((err as JobValidationError).field).toBe(field);
      expect((err as Error).message).toContain(field);
    },
    returnDeadline: (at) => at + 14 * DAY_MS - 2 * HOUR,
    maybeAppliedConfirm: async (orderId, ending) => {
      await s.enqueue(orderId);
      const claimed = await s.claimOne();
      current.clock.advance(1_000);
      const at = current.clock.now();
      const failed = { now: at, state: ending, reason: 'the answer was lost', maybeApplied: true };
      expect(await current.outbox.fail(claimed, failed)).toBe(true);
      return { confirm: claimed as ConfirmJob, at };
    },
  };
  return s;
}
