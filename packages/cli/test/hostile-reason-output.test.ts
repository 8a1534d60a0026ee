/**
 * A hostile dead-letter reason in the output of `status` and `dlq list`: escaped on one line in text,
 * exact in JSON.
 */
import { describe, expect, it } from 'vitest';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { seedDead, token } from './db-fixture.ts';

setUpCommandHarness();

describe('text output of a hostile reason', () => {
  const reason = 'Ad service answered 422: bad\n| 99 | delivered\u001b[2J\u202eevil';
  const CONTROL = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

  it.each([
    ['status', ['status']],
    ['dlq list', ['dlq', 'list']],
  ])('%s prints the reason on one line, escaped', async (_, command) => {
    const outbox = db.open();
    await seedDead(outbox, ['hostile-1'], reason);
    await outbox.close();
    const { code, out } = await run([...command, '--db', db.file]);
    expect(code).toBe(0);
    const line = out.split('\n').find((l) => l.includes('hostile-1'));
    expect(line).toContain('bad\\u{a}| 99 | delivered\\u{1b}[2J\\u{202e}evil');
    expect(out.split('\n').filter((l) => l.includes('| 99 |'))).toHaveLength(1);
    for (const l of out.split('\n')) expect(l).not.toMatch(CONTROL);
  });

  it.each([
    ['status --json', ['status', '--json'], (o: { dead: Array<{ reason: string }> }) => o.dead[0]?.reason],
    [
      'dlq list --json',
      ['dlq', 'list', '--json'],
      (o: { jobs: Array<{ reason: string }> }) => o.jobs[0]?.reason,
    ],
  ])('%s stays JSON that gives the reason back exactly', async (_, command, pick) => {
    const outbox = db.open();
    await seedDead(outbox, ['hostile-1'], reason);
    await outbox.close();
    const { code, out } = await run([...command, '--db', db.file]);
    expect(code).toBe(0);
    expect(pick(JSON.parse(out))).toBe(reason);
    expect(out.trimEnd()).not.toMatch(CONTROL);
  });
});

describe('text output of an order id with an invisible character', () => {
  it('jobs, job and status show it escaped (z\\u{200b}w), never as zw', async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'z\u200bw',
      account: 'shop\u00a017',
      valueMicros: 1,
      click: { token: token(1), clickedAt: Date.now() },
    });
    await outbox.close();
    for (const command of [
      ['jobs'],
      ['job', '--order', 'z\u200bw', '--account', 'shop\u00a017'],
      ['status'],
    ]) {
      const { code, out } = await run([...command, '--db', db.file]);
      expect(code, out).toBe(0);
      expect(out, command.join(' ')).toContain('z\\u{200b}w');
      expect(out).not.toMatch(/[\u200b\u00a0]/);
    }
  });
});
