import { describe, expect, it } from 'vitest';
import { checkAttempt, checkBeat, checkClaim, checkListDead, checkRetry } from './call-checks.ts';
import { ATTEMPT_DETAIL_MAX_CHARS } from './job-types.ts';
import { MAX_LIST_DEAD_LIMIT } from './outbox-types.ts';

const T0 = Date.UTC(2026, 0, 15, 12);
const claimed = { id: 'job_1', lease: { token: 'lease-1', expiresAt: T0 + 30_000 } };

describe('the checked store contract', () => {
  it('fills the claim defaults and stores each excluded account once, null as ""', () => {
    expect(checkClaim({ now: T0, limit: 4, leaseMs: 30_000, excludeAccounts: [null, 'shop', null] })).toEqual(
      { now: T0, limit: 4, leaseMs: 30_000, urgentWithinMs: 3_600_000, excludeKeys: ['', 'shop'] },
    );
  });

  it("keeps an attempt as the history keeps it: the record's fields only, outcome and detail escaped, detail cut", () => {
    const kept = checkAttempt({
      startedAt: T0,
      durationMs: 12,
      outcome: 'transient\u0000',
      status: 503,
      detail: `line\n${'x'.repeat(ATTEMPT_DETAIL_MAX_CHARS)}`,
      extra: 'dropped',
    });
    expect(Object.keys(kept ?? {})).toEqual(['startedAt', 'durationMs', 'outcome', 'status', 'detail']);
    expect(kept?.outcome).toBe('transient\\u{0}');
    expect(kept?.detail).toMatch(/^line\\u\{a\}x+…$/);
    expect(kept?.detail).toHaveLength(ATTEMPT_DETAIL_MAX_CHARS);
    expect(checkAttempt(undefined)).toBeNull();
  });

  it('keeps only the fields of a retry, and maybeApplied only when true', () => {
    const checked = checkRetry(claimed, {
      now: T0,
      nextAttemptAt: T0 + 1_000,
      error: 'HTTP 503',
      maybeApplied: false,
      junk: 1,
    } as never);
    expect(checked).toEqual({
      job: claimed,
      result: { now: T0, nextAttemptAt: T0 + 1_000, error: 'HTTP 503' },
      attempt: null,
    });
  });

  it('returns a beat as plain data with only its fields; a beat before accounts pauses none', () => {
    const beat = {
      workerId: 'w1',
      at: T0,
      state: 'running',
      pausedUntil: null,
      pauseReason: null,
      version: '1.0.0',
      host: 'h',
      pid: 42,
      extra: true,
    };
    expect(checkBeat(beat)).toEqual({ ...beat, extra: undefined, pausedAccounts: [] });
    expect(() => checkBeat({ ...beat, pid: 2 ** 40 })).toThrow(/beat\.pid/);
  });

  it('cuts a listDead page to the largest one and refuses a cursor that is not an id', () => {
    expect(checkListDead({ limit: 10 ** 9 })).toEqual({ limit: MAX_LIST_DEAD_LIMIT, after: undefined });
    expect(checkListDead()).toEqual({ limit: 100, after: undefined });
    expect(() => checkListDead({ after: 7 as never })).toThrow(TypeError);
  });
});
