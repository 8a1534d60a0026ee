/**
 * What every queue command shares: --help, unknown flags, and exactly one backend.
 */
import { describe, expect, it } from 'vitest';
import { db, run, setUpCommandHarness } from './command-harness.ts';

setUpCommandHarness();

describe('every queue command', () => {
  it.each(['worker', 'status', 'dlq', 'confirm', 'refund', 'enqueue'])(
    '%s prints its usage with --help and exits 0',
    async (name) => {
      const { code, out } = await run([name, '--help']);
      expect(code).toBe(0);
      expect(out).toMatch(/^Usage:/);
      expect(out).toMatch(/Exit codes/);
    },
  );

  it.each(['status', 'dlq list', 'confirm', 'refund', 'enqueue'])(
    '%s exits 2 naming an unknown flag',
    async (name) => {
      const { code, err } = await run([...name.split(' '), '--db', db.file, '--frobnicate']);
      expect(code).toBe(2);
      expect(err).toMatch(/--frobnicate/);
    },
  );

  it('exits 2 when no backend or two backends are given', async () => {
    expect((await run(['status'])).code).toBe(2);
    const both = await run(['status', '--db', db.file, '--pg', 'postgres://127.0.0.1/test']);
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/exactly one of --db/);
  });
});
