/**
 * The decision on held orders over real HTTP (`POST api/held-send`, `POST api/held-drop`): the overview
 * shows which held problems await a decision, a decision moves the problem's orders and writes one ledger
 * row per order naming the token's holder, and the bodies, methods and tokens it refuses. A memory outbox
 * (it keeps the switches of held campaigns); a SQLite one where the store keeps none.
 */
import { createMemoryOutbox, type Outbox } from '@postback/core';
import { afterEach, describe, expect, it } from 'vitest';
import { HOUR, serveDashboard, TOKEN } from './fixtures.ts';

const NOW = Date.UTC(2026, 10, 28, 12);
const SEEN = NOW - 10 * 60_000;
const NOT_ON_S2S = 'Ad service answered 422: campaign cmp_pix is not on s2s: its conversion source is pixel';
let server: Awaited<ReturnType<typeof serveDashboard>> | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * A memory outbox with 2 orders of shop-a held for cmp_pix (its switch seen at {@link SEEN}) and 1 order
 * of shop-b held for cmp_other (no switch seen).
 */
async function heldOutbox(): Promise<Outbox> {
  const outbox = createMemoryOutbox({ now: () => NOW });
  const orders = [
    ['pix-1', 'shop-a', 'cmp_pix'],
    ['pix-2', 'shop-a', 'cmp_pix'],
    ['other-1', 'shop-b', 'cmp_other'],
  ] as const;
  for (const [n, [orderId, account]] of orders.entries()) {
    const click = { token: `held-click-${n}-0000000000000`, clickedAt: NOW - HOUR };
    await outbox.confirm({ orderId, account, valueMicros: 5_000_000, click });
  }
  for (const job of await outbox.claim({ now: NOW, limit: 10, leaseMs: 60_000 })) {
    const campaignId = orders.find(([orderId]) => orderId === job.orderId)?.[2] ?? 'cmp_pix';
    await outbox.retry(job, { now: NOW, nextAttemptAt: NOW + HOUR, error: NOT_ON_S2S, hold: { campaignId } });
  }
  expect(await outbox.switches?.note({ account: 'shop-a', campaignId: 'cmp_pix', at: SEEN })).toBe(true);
  return outbox;
}

const call = async (
  path: string,
  init: { method?: string; body?: string; token?: string | null } = {},
): Promise<{ status: number; body: Record<string, unknown> }> => {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? TOKEN}`;
  const res = await fetch(new URL(path, server?.url), {
    method: init.method ?? 'POST',
    headers,
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  return { status: res.status, body: await res.json().catch(() => ({})) };
};
const pix = JSON.stringify({ account: 'shop-a', campaignId: 'cmp_pix' });

describe('held orders awaiting a decision', () => {
  it('the overview shows which held problems await a decision, with the switch seen', async () => {
    server = await serveDashboard({ outbox: await heldOutbox(), now: () => NOW });
    const { body } = await call('api/overview', { method: 'GET', token: null });
    expect(body.switches).toBe(true);
    expect(body.held).toEqual([
      expect.objectContaining({
        account: 'shop-a',
        campaignId: 'cmp_pix',
        count: 2,
        valueMicros: 10_000_000,
        switchSeenAt: SEEN,
        awaitingDecision: true,
      }),
      expect.objectContaining({
        account: 'shop-b',
        campaignId: 'cmp_other',
        switchSeenAt: null,
        awaitingDecision: false,
      }),
    ]);
  });

  it("Send makes the problem's orders due now, with a held-send ledger row each naming the token's holder", async () => {
    const outbox = await heldOutbox();
    server = await serveDashboard({ outbox, token: TOKEN, tokenName: 'ana', now: () => NOW });
    expect(await call('api/held-send', { body: pix })).toEqual({
      status: 200,
      body: { decided: 2, sent: 2, dropped: 0, expired: 0 },
    });
    for (const orderId of ['pix-1', 'pix-2']) {
      const [job] = await outbox.getByOrder(orderId, 'shop-a');
      expect(job).toMatchObject({ state: 'pending', heldAt: null, nextAttemptAt: NOW });
    }
    const rows = (await outbox.readLedger()).filter((row) => row.kind.startsWith('held-'));
    expect(rows.map((r) => [r.kind, r.orderId, r.actor, r.at])).toEqual([
      ['held-send', 'pix-1', 'ana', NOW],
      ['held-send', 'pix-2', 'ana', NOW],
    ]);
    // The other problem waits; this one no longer awaits a decision.
    const { body } = await call('api/overview', { method: 'GET' });
    expect(body.held).toEqual([
      expect.objectContaining({ campaignId: 'cmp_other', awaitingDecision: false }),
    ]);
  });

  it('Drop cancels them with a held-drop row each; past their deadline, Send expires them unsent', async () => {
    const outbox = await heldOutbox();
    server = await serveDashboard({ outbox, token: TOKEN, tokenName: 'ana', now: () => NOW });
    expect((await call('api/held-drop', { body: pix })).body).toEqual({
      decided: 2,
      sent: 0,
      dropped: 2,
      expired: 0,
    });
    const [job] = await outbox.getByOrder('pix-1', 'shop-a');
    expect(job?.state).toBe('cancelled');
    const rows = (await outbox.readLedger()).filter((row) => row.kind.startsWith('held-'));
    expect(rows.map((r) => [r.kind, r.actor])).toEqual([
      ['held-drop', 'ana'],
      ['held-drop', 'ana'],
    ]);
    // Nothing is left to decide: a second click decides nothing.
    expect((await call('api/held-drop', { body: pix })).body).toEqual({
      decided: 0,
      sent: 0,
      dropped: 0,
      expired: 0,
    });

    await server.close();
    const late = NOW + 30 * 24 * HOUR;
    server = await serveDashboard({ outbox, token: TOKEN, now: () => late });
    const other = JSON.stringify({ account: 'shop-b', campaignId: 'cmp_other' });
    expect((await call('api/held-send', { body: other })).body).toEqual({
      decided: 1,
      sent: 0,
      dropped: 0,
      expired: 1,
    });
    const [expired] = await outbox.getByOrder('other-1', 'shop-b');
    expect(expired?.state).toBe('expired');
    const last = (await outbox.readLedger()).at(-1);
    expect(last).toMatchObject({ kind: 'held-send', actor: 'dashboard', orderId: 'other-1' });
  });

  it('refuses a body that names no problem with a 400 naming the field, and decides nothing', async () => {
    const outbox = await heldOutbox();
    server = await serveDashboard({ outbox, token: TOKEN, now: () => NOW });
    const refused: [string, RegExp][] = [
      ['{"account":', /JSON/],
      ['[]', /account.*campaignId/],
      ['null', /account.*campaignId/],
      ['{"campaignId":"cmp_pix"}', /^account/],
      ['{"account":"shop-a"}', /^campaignId/],
      ['{"account":1,"campaignId":"cmp_pix"}', /^account/],
      ['{"account":"","campaignId":"cmp_pix"}', /account/],
      ['{"account":"\\ud800","campaignId":"cmp_pix"}', /account.*well-formed/],
      ['{"account":"shop-a","campaignId":"pix"}', /^campaignId/],
      ['{"account":"shop-a","campaignId":7}', /^campaignId/],
      ['{"account":"shop-a","campaignId":"cmp_pix","all":true}', /unknown field/],
    ];
    for (const [body, error] of refused) {
      const answer = await call('api/held-drop', { body });
      expect([body, answer.status]).toEqual([body, 400]);
      expect(String(answer.body.error)).toMatch(error);
    }
    expect((await outbox.getByOrder('pix-1', 'shop-a'))[0]?.heldAt).not.toBeNull();
  });

  it('needs the token (403), same-site JSON (403, 415), a POST (405), and a store that keeps switches (409)', async () => {
    const outbox = await heldOutbox();
    server = await serveDashboard({ outbox, token: TOKEN, now: () => NOW });
    expect((await call('api/held-send', { body: pix, token: null })).status).toBe(403);
    expect((await call('api/held-send', { body: pix, token: 'not-the-token-0123456789' })).status).toBe(403);
    const raw = (headers: Record<string, string>) =>
      fetch(new URL('api/held-drop', server?.url), { method: 'POST', headers, body: pix });
    const bearer = { authorization: `Bearer ${TOKEN}` };
    const crossSite = { ...bearer, 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' };
    expect((await raw(crossSite)).status).toBe(403);
    expect((await raw({ ...bearer, 'content-type': 'text/plain' })).status).toBe(415);
    const get = await fetch(new URL('api/held-drop', server.url), {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await outbox.getByOrder('pix-1', 'shop-a'))[0]?.heldAt).not.toBeNull();
    await server.close();

    server = await serveDashboard({ outbox, now: () => NOW });
    expect((await call('api/held-drop', { body: pix })).status).toBe(403);
    await server.close();

    // A store that keeps no switches (SQS): the same outbox without them.
    const { switches: _none, ...withoutSwitches } = outbox;
    try {
      server = await serveDashboard({ outbox: withoutSwitches, token: TOKEN, now: () => NOW });
      const answer = await call('api/held-send', { body: pix });
      expect(answer.status).toBe(409);
      expect(String(answer.body.error)).toMatch(/keeps no switches/);
      expect((await call('api/overview', { method: 'GET' })).body.switches).toBe(false);
    } finally {
      await server?.close();
      server = undefined;
    }
  });
});
