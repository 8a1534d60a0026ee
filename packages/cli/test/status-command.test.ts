/**
 * `postback status`: counts by state, oldest pending, nearest deadline and dead jobs, as JSON and as text.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { seedDead, token } from './db-fixture.ts';

setUpCommandHarness();

describe('postback status', () => {
  it('exits 3 for a database file that does not exist instead of creating an empty one', async () => {
    const missing = join(db.dir, 'nope.db');
    const { code, err } = await run(['status', '--db', missing]);
    expect(code).toBe(3);
    expect(err).toMatch(/no such database file/);
  });

  it('reports counts by state, oldest pending, nearest deadline and dead jobs with reasons as JSON', async () => {
    const outbox = db.open();
    const clickedAt = Date.now() - 3_600_000;
    await seedDead(outbox, ['dead-1', 'dead-2'], 'Ad service answered 404: click_token not found');
    await outbox.confirm({ orderId: 'pending-1', valueMicros: 5, click: { token: token(1), clickedAt } });
    await outbox.close();

    const { code, out } = await run(['status', '--db', db.file, '--json']);
    expect(code).toBe(0);
    const status = JSON.parse(out);
    expect(status.counts).toEqual({
      pending: 1,
      inflight: 0,
      delivered: 0,
      dead: 2,
      expired: 0,
      cancelled: 0,
      unmatched: 0,
    });
    expect(status.total).toBe(3);
    expect(typeof status.oldestPendingAt).toBe('string');
    expect(status.nearestDeadline).toMatchObject({ orderId: 'pending-1', kind: 'confirm' });
    expect(Date.parse(status.nearestDeadline.deadline)).toBe(clickedAt + 7 * 86_400_000 - 3_600_000);
    expect(status.dead.map((j: { orderId: string }) => j.orderId).sort()).toEqual(['dead-1', 'dead-2']);
    expect(status.dead[0].reason).toMatch(/click_token not found/);
  });

  it('prints a readable summary without --json', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['dead-1'], 'permanent: 422');
    await outbox.close();
    const { code, out } = await run(['status', '--db', db.file]);
    expect(code).toBe(0);
    expect(out).toMatch(/dead\s+1/);
    expect(out).toMatch(/dead-1/);
    expect(out).toMatch(/permanent: 422/);
  });
});
