/**
 * How the CLI shows times and reads durations: ISO 8601 with a relative "in 3h 12m" / "3h 12m ago",
 * two units at most, and duration flags (`90m`, `24h`, `2d`) as milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/args.ts';
import { durationValue, parseCommand } from '../src/flags.ts';
import { cut, duration, elapsed, relative, when } from '../src/format.ts';
import type { CommandSpec } from '../src/spec.ts';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const NOW = Date.parse('2026-01-02T03:04:05.000Z');

describe('relative times', () => {
  it('shows the two largest units, rounded down, and leaves out a zero second unit', () => {
    expect(duration(0)).toBe('0s');
    expect(duration(999)).toBe('0s');
    expect(duration(45 * S)).toBe('45s');
    expect(duration(5 * M + 3 * S)).toBe('5m 3s');
    expect(duration(3 * H + 12 * M + 59 * S)).toBe('3h 12m');
    expect(duration(3 * H + 30 * S)).toBe('3h');
    expect(duration(2 * D + 4 * H + 59 * M)).toBe('2d 4h');
    expect(duration(9 * D)).toBe('9d');
  });

  it('says "in" for the future, "ago" for the past (the sign of a negative span), "now" within a second', () => {
    expect(relative(NOW + 3 * H + 12 * M, NOW)).toBe('in 3h 12m');
    expect(relative(NOW - (3 * H + 12 * M), NOW)).toBe('3h 12m ago');
    expect(relative(NOW + 2 * D + 4 * H, NOW)).toBe('in 2d 4h');
    expect(relative(NOW - 12 * S, NOW)).toBe('12s ago');
    expect(relative(NOW + 400, NOW)).toBe('now');
  });

  it('writes every time as ISO 8601 UTC followed by the relative time, and a missing one as -', () => {
    expect(when(NOW + 3 * H + 12 * M, NOW)).toBe('2026-01-02T06:16:05.000Z (in 3h 12m)');
    expect(when(NOW - 2 * D - 4 * H, NOW)).toBe('2025-12-30T23:04:05.000Z (2d 4h ago)');
    expect(when(null, NOW)).toBe('-');
  });

  it('shows how long a send took in ms, then seconds with one decimal, then units', () => {
    expect(elapsed(850)).toBe('850ms');
    expect(elapsed(3_249)).toBe('3.2s');
    expect(elapsed(90 * S)).toBe('1m 30s');
  });

  it('cuts a field after escaping it, with an ellipsis, never past the width', () => {
    expect(cut('short', 10)).toBe('short');
    expect(cut('Ad service answered 404: click_token not found', 20)).toBe('Ad service answered…');
    expect(cut('a\nb\nc\nd', 6)).toHaveLength(6);
  });
});

describe('duration flags', () => {
  const spec = {
    name: 'demo',
    summary: 'durations',
    usage: ['postback demo'],
    description: '',
    flags: {
      within: { type: 'duration', value: 'DURATION', help: 'a window', default: '24h' },
      since: { type: 'duration', value: 'DURATION', help: 'an age' },
    },
    exitCodes: '0 ok.',
  } as const satisfies CommandSpec;

  it('reads digits and units as milliseconds, compound ones too', () => {
    expect(durationValue('--x', '90m')).toBe(90 * M);
    expect(durationValue('--x', '24h')).toBe(24 * H);
    expect(durationValue('--x', '2d')).toBe(2 * D);
    expect(durationValue('--x', '1h30m')).toBe(90 * M);
    expect(durationValue('--x', '1w')).toBe(7 * D);
    expect(durationValue('--x', '500ms')).toBe(500);
    expect(durationValue('--x', '0s')).toBe(0);
  });

  it('refuses a bare number, an unknown unit, a sign or spaces as a usage error naming the flag', () => {
    for (const bad of ['7', '2 d', '-1h', '1y', 'h', '', '1.5h']) {
      expect(() => durationValue('--older-than', bad)).toThrow(UsageError);
    }
    expect(() => durationValue('--older-than', '7')).toThrow(
      "--older-than must be a duration like 90m, 24h or 2d, got '7'",
    );
  });

  it('parses a duration flag and its default from a command table', () => {
    expect(parseCommand(spec, [], {}).values).toEqual({ within: 24 * H, since: undefined });
    expect(parseCommand(spec, ['--within', '90m', '--since', '2d'], {}).values).toEqual({
      within: 90 * M,
      since: 2 * D,
    });
  });
});
