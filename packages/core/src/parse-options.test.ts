/** The one options parser of postback: unknown keys and bad values become an OptionsError naming the option. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OptionsError } from './errors.ts';
import { parseOptions } from './parse-options.ts';
import {
  DAY_MS,
  DEFAULT_CONFIRMATION_RETENTION_MS,
  DEFAULT_WINDOW_POLICY,
  refundDeadlineOf,
  resolvePolicy,
  windowPolicySchema,
} from './policy.ts';

const schema = z.strictObject({
  limit: z.int().min(1).default(10),
  nested: z.strictObject({ depth: z.int().optional() }).optional(),
  policy: windowPolicySchema,
});

function failure(input: unknown): OptionsError {
  try {
    parseOptions(schema, input);
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return error as OptionsError;
  }
  throw new Error('expected an OptionsError');
}

describe('parseOptions', () => {
  it('applies the schema defaults, and reads an absent options object as empty', () => {
    expect(parseOptions(schema, undefined)).toEqual({ limit: 10, policy: DEFAULT_WINDOW_POLICY });
    expect(parseOptions(schema, { limit: 3 }).limit).toBe(3);
  });

  it('names an unknown key at its own path, at the top level and nested', () => {
    expect(failure({ limt: 3 })).toMatchObject({
      field: 'limt',
      message: 'Invalid option limt: unknown option',
    });
    expect(failure({ nested: { dept: 1 } }).field).toBe('nested.dept');
  });

  it('names a bad value by its dotted path, and a bad whole object as options', () => {
    expect(failure({ limit: 0 }).field).toBe('limit');
    expect(failure({ nested: { depth: 1.5 } }).field).toBe('nested.depth');
    expect(failure('limit=3').field).toBe('options');
  });
});

describe('windowPolicySchema', () => {
  it('fills in the default windows, for an absent policy and for each absent window', () => {
    expect(parseOptions(schema, {}).policy).toEqual(DEFAULT_WINDOW_POLICY);
    const policy = parseOptions(schema, {
      policy: { returnWindowMs: 14 * DAY_MS, safetyMarginMs: undefined },
    }).policy;
    expect(policy).toEqual({ ...DEFAULT_WINDOW_POLICY, returnWindowMs: 14 * DAY_MS });
  });

  it('assumes no return window: null (open-ended) by default, a reversal bounded by the confirmation retention', () => {
    expect(DEFAULT_WINDOW_POLICY).toMatchObject({
      returnWindowMs: null,
      confirmationRetentionMs: 400 * DAY_MS,
    });
    expect(DEFAULT_CONFIRMATION_RETENTION_MS).toBe(400 * DAY_MS);
    expect(refundDeadlineOf(1_000)).toBe(1_000 + 400 * DAY_MS);
    const configured = resolvePolicy({ returnWindowMs: 30 * DAY_MS });
    expect(refundDeadlineOf(1_000, configured)).toBe(1_000 + 30 * DAY_MS - configured.safetyMarginMs);
    expect(parseOptions(schema, { policy: { returnWindowMs: null } }).policy.returnWindowMs).toBeNull();
    expect(failure({ policy: { confirmationRetentionMs: -1 } }).field).toBe('policy.confirmationRetentionMs');
  });

  it('refuses unknown keys, windows that are not non-negative safe integers, and a margin not shorter than the window', () => {
    expect(failure({ policy: { returnWindowMS: DAY_MS } }).field).toBe('policy.returnWindowMS');
    expect(failure({ policy: { confirmWindowMs: -1 } }).field).toBe('policy.confirmWindowMs');
    expect(failure({ policy: { returnWindowMs: 1.5 } }).field).toBe('policy.returnWindowMs');
    expect(failure({ policy: { returnWindowMs: 2 ** 60 } }).field).toBe('policy.returnWindowMs');
    const margin = failure({ policy: { confirmWindowMs: 1_000, safetyMarginMs: 1_000 } });
    expect(margin).toMatchObject({ field: 'policy' });
    expect(margin.message).toContain('safetyMarginMs must be shorter than confirmWindowMs');
  });

  it('is what resolvePolicy checks with, as a RangeError naming the window', () => {
    expect(resolvePolicy()).toEqual(DEFAULT_WINDOW_POLICY);
    expect(() => resolvePolicy({ confirmWindowMs: -1 })).toThrow(/^confirmWindowMs must be a non-negative/);
    expect(() => resolvePolicy({ safetyMarginMs: 8 * DAY_MS })).toThrow(RangeError);
  });
});
