/**
 * `postback refund`: cancels what was not sent, reverses what was, and takes a campaign with --campaign-id.
 */
import { createMemoryOutbox } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { createRefundCommand } from '../src/commands/refund.ts';
import { captureIo } from './capture-io.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

describe('postback refund', () => {
  it('cancels a confirmation that was not sent yet, then reports the refund as not charged', async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'o-1',
      valueMicros: 1,
      click: { token: token(1), clickedAt: Date.now() },
    });
    await outbox.close();
    const first = await run(['refund', '--db', db.file, '--order-id', 'o-1', '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({
      outcome: 'cancelled',
      job: { kind: 'confirm', state: 'cancelled' },
    });
    const again = await run(['refund', '--db', db.file, '--order-id', 'o-1']);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/without a charge/);
  });

  it('says a confirmation refused for good after a lost answer was never charged, and enqueues no reversal', async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'o-404',
      valueMicros: 1,
      click: { token: token(9), clickedAt: Date.now() },
    });
    const [first] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    const lost = { now: Date.now(), nextAttemptAt: Date.now(), error: 'timeout', maybeApplied: true };
    await outbox.retry(first as never, lost);
    const [second] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    const refused = { now: Date.now(), state: 'dead' as const, reason: 'HTTP 404: click_token not found' };
    await outbox.fail(second as never, { ...refused, neverApplied: true });
    await outbox.close();
    const result = await run(['refund', '--db', db.file, '--order-id', 'o-404']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/was never charged .*nothing to reverse/);
    const after = db.open();
    const jobs = await after.getByOrder('o-404');
    await after.close();
    expect(jobs.map((j) => [j.kind, j.state])).toEqual([['confirm', 'cancelled']]);
  });

  it('enqueues a reversal of a delivered confirmation using its campaign, once', async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'o-2',
      valueMicros: 1,
      click: { token: token(2), clickedAt: Date.now() },
    });
    const [job] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    await outbox.complete(job as never, { now: Date.now(), campaignId: 'cmp_abc' });
    await outbox.close();
    const first = await run(['refund', '--db', db.file, '--order-id', 'o-2', '--json']);
    expect(JSON.parse(first.out)).toMatchObject({
      outcome: 'enqueued',
      job: { kind: 'refund', campaignId: 'cmp_abc', campaignFrom: 'answer' },
    });
    const second = await run(['refund', '--db', db.file, '--order-id', 'o-2', '--json']);
    expect(JSON.parse(second.out)).toMatchObject({ outcome: 'duplicate' });
  });

  it('gives a dead reversal that had no campaign the one given with --campaign-id: outcome updated, pending again', async () => {
    const outbox = createMemoryOutbox();
    await outbox.confirm({
      orderId: 'o-4',
      valueMicros: 1,
      click: { token: token(4), clickedAt: Date.now() },
    });
    const [confirm] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    // The confirmation's answer carried no campaign: the reversal cannot be sent and dead-letters.
    await outbox.complete(confirm as never, { now: Date.now(), campaignId: null });
    await outbox.refund({ orderId: 'o-4' });
    const [refund] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    await outbox.fail(refund as never, { now: Date.now(), state: 'dead', reason: 'no campaign known' });
    const ctx = { openBackend: async () => ({ outbox, describe: 'memory' }), now: () => Date.now() };
    const io = captureIo();
    const args = ['--db', db.file, '--order-id', 'o-4', '--campaign-id', 'cmp_given', '--json'];
    expect(await createRefundCommand(ctx).run(args, io)).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject({
      outcome: 'updated',
      job: { kind: 'refund', campaignId: 'cmp_given', state: 'pending', campaignFrom: 'caller' },
    });
  });

  it('says a configured return window has closed, and enqueues nothing', async () => {
    // Delivered 31 days ago into a store whose policy configures a 30-day return window.
    const delivered = async () => {
      const outbox = createMemoryOutbox({ policy: { returnWindowMs: 30 * 86_400_000 } });
      await outbox.confirm({
        orderId: 'o-6',
        valueMicros: 1,
        click: { token: token(6), clickedAt: Date.now() },
      });
      const [confirm] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
      await outbox.complete(confirm as never, { now: Date.now() - 31 * 86_400_000, campaignId: 'cmp_abc' });
      const ctx = { openBackend: async () => ({ outbox, describe: 'memory' }), now: () => Date.now() };
      return { outbox, command: createRefundCommand(ctx) };
    };
    const text = captureIo();
    expect(await (await delivered()).command.run(['--db', db.file, '--order-id', 'o-6'], text)).toBe(0);
    expect(text.out()).toMatch(/return window of order o-6 has closed: nothing was enqueued/);
    const json = captureIo();
    const { command } = await delivered();
    expect(await command.run(['--db', db.file, '--order-id', 'o-6', '--json'], json)).toBe(0);
    expect(JSON.parse(json.out())).toMatchObject({ outcome: 'window-closed', job: { kind: 'confirm' } });
  });

  it('says in text which campaign a refund now reverses in when it supplies one', async () => {
    const outbox = createMemoryOutbox();
    await outbox.confirm({
      orderId: 'o-5',
      valueMicros: 1,
      click: { token: token(5), clickedAt: Date.now() },
    });
    const [confirm] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    await outbox.complete(confirm as never, { now: Date.now(), campaignId: null });
    await outbox.refund({ orderId: 'o-5' });
    const ctx = { openBackend: async () => ({ outbox, describe: 'memory' }), now: () => Date.now() };
    const io = captureIo();
    const code = await createRefundCommand(ctx).run(
      ['--db', db.file, '--order-id', 'o-5', '--campaign-id', 'cmp_late'],
      io,
    );
    expect(code).toBe(0);
    expect(io.out()).toMatch(/now reverses in campaign cmp_late/);
  });

  it('exits 2 naming --campaign-id when it is not of the form cmp_<id>', async () => {
    const { code, err } = await run([
      'refund',
      '--db',
      db.file,
      '--order-id',
      'o-3',
      '--campaign-id',
      'campaign 3',
    ]);
    expect(code).toBe(2);
    expect(err).toMatch(/--campaign-id/);
  });
});
