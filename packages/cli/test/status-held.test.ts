/**
 * `postback status` names jobs held because their campaign is not on s2s: one entry per campaign problem
 * (text and JSON) with the count and value held, and `--fail-on-paused` exits 12 with alert `jobs-held`.
 */
import { describe, expect, it } from 'vitest';
import { STATUS_EXIT } from '../src/specs/status.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

const NOT_S2S = 'Ad service answered 422: campaign cmp_pix is not on s2s: its conversion source is pixel';

/** Three orders of one campaign held, worth 4.50 in all, and one pending order not held. */
async function seedHeld(): Promise<{ now: number; earliestDeadline: number }> {
  const outbox = db.open();
  for (let i = 0; i < 4; i++) {
    await outbox.confirm({
      orderId: `ord_${i}`,
      valueMicros: 1_500_000,
      click: { token: token(i + 1), clickedAt: Date.now() - 3_600_000 },
    });
  }
  const now = Date.now();
  const claimed = await outbox.claim({ now, limit: 3, leaseMs: 30_000 });
  const earliestDeadline = Math.min(...claimed.map((job) => job.deadline as number));
  for (const job of claimed) {
    const held = { now, nextAttemptAt: now + 600_000, error: NOT_S2S, hold: { campaignId: 'cmp_pix' } };
    expect(await outbox.retry(job, held)).toBe(true);
  }
  await outbox.close();
  return { now, earliestDeadline };
}

describe('postback status: held jobs', () => {
  it('names each campaign problem once, with the count and value held, in text and JSON', async () => {
    const { now: since, earliestDeadline } = await seedHeld();
    const text = await run(['status', '--db', db.file]);
    expect(text.code).toBe(0);
    const lines = text.out.split('\n').filter((line) => line.includes('cmp_pix'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('cmp_pix: 3 job(s) worth 4.50 held since');
    expect(lines[0]).toContain('is not on s2s');

    const json = await run(['status', '--db', db.file, '--json']);
    const status = JSON.parse(json.out);
    expect(status.held).toEqual([
      {
        account: null,
        campaignId: 'cmp_pix',
        count: 3,
        valueMicros: 4_500_000,
        reason: NOT_S2S,
        since: new Date(since).toISOString(),
        earliestDeadline: new Date(earliestDeadline).toISOString(),
        switchSeenAt: null,
        awaitingDecision: false,
      },
    ]);
    expect(status.counts).toMatchObject({ pending: 4, dead: 0 });
    expect(status.alerts).toEqual([]);
  });

  it('--fail-on-paused exits 12 with alert jobs-held while jobs are held', async () => {
    await seedHeld();
    const { code, out, err } = await run(['status', '--db', db.file, '--json', '--fail-on-paused']);
    expect(code).toBe(STATUS_EXIT.paused);
    expect(code).toBe(12);
    expect(JSON.parse(out).alerts).toEqual(['jobs-held']);
    expect(err).toContain('3 job(s) held: campaign not on s2s: cmp_pix');
  });

  it('--fail-on-paused exits 0 with no held job (and no worker paused)', async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'ord_x',
      valueMicros: 1,
      click: { token: token(9), clickedAt: Date.now() },
    });
    await outbox.close();
    const { code } = await run(['status', '--db', db.file, '--json', '--fail-on-paused']);
    expect(code).toBe(0);
  });
});
