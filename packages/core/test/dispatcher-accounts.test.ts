/**
 * The Dispatcher delivering for many advertiser accounts (`apiKeyFor`): each job is sent with its
 * account's key; a refused key (401/403) or a missing one pauses that account only, its jobs wait
 * uncounted and are left out of claims, and a probe after `authPauseMs` resumes it. Real HTTP to a scripted
 * fake of the ad service that refuses revoked keys (echoing them back); set-up in `dispatcher-harness.ts`.
 */
import type { ConfirmJob } from '@postback/core';
import { describe, expect, it } from 'vitest';
import {
  clock,
  confirmRequests,
  dispatcherWith,
  eventsNamed,
  HOUR,
  outbox,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';

setUpDispatcherHarness();

const KEYS = new Map<string, string>([
  ['shop-a', 'pbsk_live_SHOP_A_aaaaaaaaaaaaaaaa'],
  ['shop-b', 'pbsk_live_SHOP_B_bbbbbbbbbbbbbbbb'],
]);

async function enqueue(orderId: string, account: string): Promise<ConfirmJob> {
  const click = { token: `tok_${orderId}_XyZ`, clickedAt: clock.now() - HOUR };
  return (await outbox.confirm({ orderId, valueMicros: 1_000_000, click, account })).job;
}

const keyOf = (request: { headers: { authorization?: string } }) =>
  request.headers.authorization?.replace(/^Bearer /, '');
const sentWith = (key: string | undefined) => confirmRequests().filter((r) => keyOf(r) === key);

describe('Dispatcher with a key per account', () => {
  it('sends each job with the key of its account', async () => {
    await enqueue('ord_a', 'shop-a');
    await enqueue('ord_b', 'shop-b');
    const dispatcher = dispatcherWith({ apiKeyFor: (account) => KEYS.get(account ?? '') });
    expect(await dispatcher.drain()).toMatchObject({ delivered: 2 });
    const byOrder = new Map(confirmRequests().map((r) => [r.body.order_id, keyOf(r)]));
    expect(byOrder).toEqual(
      new Map([
        ['ord_a', KEYS.get('shop-a')],
        ['ord_b', KEYS.get('shop-b')],
      ]),
    );
  });

  it('a 401 pauses only that account: its jobs wait uncounted and unclaimed, the others deliver; a probe resumes it', async () => {
    const keyA = KEYS.get('shop-a') as string;
    service.revokedKeys.add(keyA);
    const a = [
      await enqueue('a_1', 'shop-a'),
      await enqueue('a_2', 'shop-a'),
      await enqueue('a_3', 'shop-a'),
    ];
    for (let i = 0; i < 4; i++) await enqueue(`b_${i}`, 'shop-b');
    const dispatcher = dispatcherWith({
      apiKeyFor: (account) => KEYS.get(account ?? ''),
      concurrency: 1,
      batchSize: 2,
      authPauseMs: 60_000,
    });
    const first = await dispatcher.drain();
    expect(first.delivered).toBe(4);
    expect(dispatcher.state).not.toBe('paused');
    expect(sentWith(keyA)).toHaveLength(1); // the other jobs of shop-a were never sent into the outage
    expect(eventsNamed('account-paused')).toEqual([
      expect.objectContaining({ account: 'shop-a', status: 401, until: clock.now() + 60_000 }),
    ]);
    expect(eventsNamed('paused')).toEqual([]);
    for (const job of a) {
      const stored = await outbox.get(job.id);
      expect(stored).toMatchObject({ state: 'pending', attempts: 0 });
    }
    const metrics = await dispatcher.metrics();
    expect(metrics.pausedAccounts).toEqual([
      expect.objectContaining({ account: 'shop-a', status: 401, since: clock.now() }),
    ]);
    expect(metrics.counters.accountPauses).toBe(1);

    // While paused, the account's jobs are not even claimed.
    clock.advance(30_000);
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 0 });

    // The key comes back; after the pause one job probes it, then the rest follow.
    service.revokedKeys.delete(keyA);
    clock.advance(30_000);
    expect(await dispatcher.drain()).toMatchObject({ delivered: 3 });
    expect(eventsNamed('account-resumed')).toEqual([{ account: 'shop-a', pausedForMs: 60_000 }]);
    expect((await dispatcher.metrics()).pausedAccounts).toEqual([]);
    expect(sentWith(keyA)).toHaveLength(4);
    expect(eventsNamed('account-paused')).toHaveLength(1);
  });

  it('a refused probe extends the pause without a new alert', async () => {
    const keyA = KEYS.get('shop-a') as string;
    service.revokedKeys.add(keyA);
    await enqueue('a_1', 'shop-a');
    await enqueue('a_2', 'shop-a');
    const dispatcher = dispatcherWith({
      apiKeyFor: (account) => KEYS.get(account ?? ''),
      authPauseMs: 1_000,
      concurrency: 1,
    });
    await dispatcher.drain();
    clock.advance(1_000);
    await dispatcher.drain();
    expect(sentWith(keyA)).toHaveLength(2); // the first send and one probe
    expect(eventsNamed('account-paused')).toHaveLength(1);
    expect(eventsNamed('account-resumed')).toHaveLength(0);
    expect((await dispatcher.metrics()).pausedAccounts).toEqual([
      expect.objectContaining({ account: 'shop-a', until: clock.now() + 1_000 }),
    ]);
  });

  it('an account without a key pauses with that reason and sends nothing; the key is asked again at the probe', async () => {
    const keys = new Map(KEYS);
    await enqueue('c_1', 'shop-c');
    await enqueue('b_1', 'shop-b');
    const dispatcher = dispatcherWith({
      apiKeyFor: (account) => keys.get(account ?? ''),
      authPauseMs: 5_000,
    });
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1, deferred: 1 });
    expect(confirmRequests()).toHaveLength(1);
    expect(eventsNamed('account-paused')).toEqual([
      expect.objectContaining({ account: 'shop-c', status: null, reason: 'no API key for account shop-c' }),
    ]);
    keys.set('shop-c', 'pbsk_live_SHOP_C_cccccccccccccccc');
    clock.advance(5_000);
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    expect(sentWith('pbsk_live_SHOP_C_cccccccccccccccc')).toHaveLength(1);
  });

  it('a key the client will not send (a stray newline from a keys file) pauses its account; nothing goes dead', async () => {
    const job = await enqueue('a_1', 'shop-a');
    const dispatcher = dispatcherWith({ apiKeyFor: () => 'pbsk_live_SHOP_A_aaaa\n' });
    expect(await dispatcher.drain()).toMatchObject({ deferred: 1, dead: 0 });
    expect(await outbox.get(job.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(eventsNamed('account-paused')).toEqual([expect.objectContaining({ account: 'shop-a' })]);
    expect(confirmRequests()).toHaveLength(0);
  });

  it('jobs without an account use the key the resolver gives for null', async () => {
    const click = { token: 'tok_plain_XyZ', clickedAt: clock.now() - HOUR };
    await outbox.confirm({ orderId: 'plain', valueMicros: 1, click });
    const dispatcher = dispatcherWith({
      apiKeyFor: (account) => (account === null ? 'pbsk_default_0000' : undefined),
    });
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    expect(sentWith('pbsk_default_0000')).toHaveLength(1);
  });

  it('a key echoed back by the service is stored and shown nowhere', async () => {
    const keyA = KEYS.get('shop-a') as string;
    service.revokedKeys.add(keyA);
    const job = await enqueue('a_1', 'shop-a');
    const dispatcher = dispatcherWith({ apiKeyFor: (account) => KEYS.get(account ?? '') });
    await dispatcher.drain();
    const stored = JSON.stringify([await outbox.get(job.id), await outbox.history(job.id)]);
    expect(stored).toContain('revoked');
    expect(stored).not.toContain(keyA);
    expect(JSON.stringify(eventsNamed('account-paused'))).not.toContain(keyA);
    expect(JSON.stringify(await dispatcher.metrics())).not.toContain(keyA);
  });

  it('a job past its deadline expires without waiting for a missing key', async () => {
    const click = { token: 'tok_late_XyZ', clickedAt: clock.now() - 8 * 24 * HOUR };
    const { job } = await outbox.confirm({ orderId: 'late', valueMicros: 1, click, account: 'shop-z' });
    const dispatcher = dispatcherWith({ apiKeyFor: () => undefined });
    expect(await dispatcher.drain()).toMatchObject({ expired: 1 });
    expect((await outbox.get(job.id))?.state).toBe('expired');
    expect(eventsNamed('account-paused')).toEqual([]);
  });
});
