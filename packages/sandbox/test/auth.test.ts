/**
 * Keys, scopes and account isolation: 401 for a missing or unknown key, 403 for a missing scope on
 * every route (including our choice for plan and boost), 404 for other accounts' objects worded exactly
 * as for objects that do not exist, and `{ detail }` bodies that never carry the key.
 */
import { describe, expect } from 'vitest';
import { V1_ROUTES } from '../src/index.ts';
import { campaignWithClick, raw, type TestAccount, test } from './fixtures.ts';
import { type WireClient as AdServiceClient, createWireClient, WireError } from './wire.ts';

type Scope = 'read' | 'write' | 'conversions';

/** One client call per /v1 route, with the scope the route needs. */
function callsFor(ids: { campaignId: string; siteId: string; placementId: string; clickToken: string }) {
  return [
    { route: 'GET /v1/me', scope: 'read', call: (c: AdServiceClient) => c.me.get() },
    { route: 'GET /v1/campaigns', scope: 'read', call: (c: AdServiceClient) => c.campaigns.list() },
    {
      route: 'POST /v1/campaigns',
      scope: 'write',
      call: (c: AdServiceClient) =>
        c.campaigns.create({
          name: 'n',
          pricing_model: 'cpc',
          bid_micros: 1,
          total_budget_micros: 1,
          creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://a.example/' }],
        }),
    },
    {
      route: 'POST /v1/campaigns/plan',
      scope: 'read',
      call: (c: AdServiceClient) => c.campaigns.plan({ total_budget_micros: 1_000_000 }),
    },
    {
      route: 'GET /v1/refunds',
      scope: 'read',
      call: (c: AdServiceClient) => c.refunds.list({ campaign_id: ids.campaignId }),
    },
    {
      route: 'POST /v1/conversions/s2s',
      scope: 'conversions',
      call: (c: AdServiceClient) =>
        c.conversions.confirm({
          click_token: ids.clickToken,
          order_id: `o-${Math.random()}`,
          value_micros: 1,
        }),
    },
    {
      route: 'POST /v1/conversions/s2s/refund',
      scope: 'conversions',
      call: (c: AdServiceClient) =>
        c.conversions.refund({ campaign_id: ids.campaignId, order_id: 'none' }).catch(notFoundIsFine),
    },
    { route: 'GET /v1/sites', scope: 'read', call: (c: AdServiceClient) => c.sites.list() },
    {
      route: 'POST /v1/sites',
      scope: 'write',
      call: (c: AdServiceClient) =>
        c.sites.create({ domain: `s${Math.random().toString(36).slice(2)}.example.com` }),
    },
    {
      route: 'POST /v1/sites/{site_id}/verify',
      scope: 'write',
      call: (c: AdServiceClient) => c.sites.verify(ids.siteId),
    },
    {
      route: 'GET /v1/placements',
      scope: 'read',
      call: (c: AdServiceClient) => c.placements.list({ site_id: ids.siteId }),
    },
    {
      route: 'POST /v1/placements',
      scope: 'write',
      call: (c: AdServiceClient) => c.placements.create({ site_id: ids.siteId, name: 'slot' }),
    },
    {
      route: 'GET /v1/placements/{placement_id}/live',
      scope: 'read',
      call: (c: AdServiceClient) => c.placements.live(ids.placementId),
    },
    { route: 'GET /v1/boost', scope: 'read', call: (c: AdServiceClient) => c.boost.get() },
    {
      route: 'POST /v1/boost',
      scope: 'write',
      call: (c: AdServiceClient) => c.boost.claim({ campaign_id: ids.campaignId }).catch(conflictIsFine),
    },
    { route: 'GET /v1/credits', scope: 'read', call: (c: AdServiceClient) => c.credits.get() },
    { route: 'GET /v1/segments', scope: 'read', call: (c: AdServiceClient) => c.segments.list() },
  ] as const;
}

/** Past the scope check, a refusal for another reason still proves the scope was accepted. */
function notFoundIsFine(err: unknown): unknown {
  if (err instanceof WireError && err.status === 404) return 'past the scope check';
  throw err;
}
function conflictIsFine(err: unknown): unknown {
  if ((err as { status?: number }).status === 409) return 'past the scope check';
  throw err;
}

async function fixtureIds(sandbox: Parameters<typeof campaignWithClick>[0], acct: TestAccount) {
  const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
  const site = await acct.write.sites.create({ domain: 'owner.example.com' });
  const placement = await acct.write.placements.create({ site_id: site.id, name: 'top' });
  return { campaignId, clickToken, siteId: site.id, placementId: placement.id };
}

describe('authentication', () => {
  test('answers 401 with a JSON detail when the key is missing', async ({ sandbox }) => {
    const res = await raw(sandbox, 'GET', '/v1/me');
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ detail: expect.any(String) });
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  test('answers 401 for an unknown key, without echoing the key', async ({ sandbox }) => {
    const secret = 'pbsk_this-is-not-a-real-key-0123456789';
    const client = createWireClient(sandbox.url, secret);
    const err = (await client.me.get().catch((e: unknown) => e)) as WireError;
    expect(err).toMatchObject({ status: 401, detail: 'invalid API key' });
    expect(err.text).not.toContain(secret);
  });

  test('answers 401 for a non-Bearer Authorization header', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const res = await raw(sandbox, 'GET', '/v1/me', {
      headers: { authorization: `Basic ${acct.keys.read}` },
    });
    expect(res.status).toBe(401);
  });

  test('GET /v1/me names the account and the scopes of the key', async ({ newAccount }) => {
    const acct = await newAccount();
    expect(await acct.read.me.get()).toEqual({ account_id: acct.accountId, scopes: ['read'] });
    expect(await acct.all.me.get()).toEqual({
      account_id: acct.accountId,
      scopes: ['read', 'write', 'conversions'],
    });
  });
});

describe('scopes', () => {
  test('every route answers 403 to keys without its scope and serves keys with it', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const ids = await fixtureIds(sandbox, acct);
    const calls = callsFor(ids);
    // The table covers every route the sandbox serves, with the scope it declares.
    expect(calls.map((c) => `${c.route} ${c.scope}`).sort()).toEqual(
      V1_ROUTES.map((r) => `${r.method} ${r.path} ${r.scope}`).sort(),
    );
    const clients: Record<Scope, AdServiceClient> = {
      read: acct.read,
      write: acct.write,
      conversions: acct.conversions,
    };
    for (const { route, scope, call } of calls) {
      for (const keyScope of ['read', 'write', 'conversions'] as const) {
        const outcome = await call(clients[keyScope]).then(
          () => 'served',
          (e: unknown) => e,
        );
        if (keyScope === scope) expect(outcome, `${route} with a ${keyScope} key`).not.toBeInstanceOf(Error);
        else {
          expect(outcome, `${route} with a ${keyScope} key`).toMatchObject({ status: 403 });
          expect((outcome as WireError).detail).toContain(`'${scope}'`);
        }
      }
    }
  });

  test('POST /v1/campaigns/plan is allowed to a read-only key and POST /v1/boost needs write', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId } = await campaignWithClick(sandbox, acct);
    await expect(acct.read.campaigns.plan({ total_budget_micros: 10_000_000 })).resolves.toMatchObject({
      reserve_micros: 10_000_000,
    });
    await expect(acct.read.boost.claim({ campaign_id: campaignId })).rejects.toMatchObject({ status: 403 });
    await expect(acct.write.boost.claim({ campaign_id: campaignId })).resolves.toMatchObject({
      claimed: true,
    });
  });
});

describe('other accounts', () => {
  test('every id-taking endpoint answers 404 for another account’s object exactly as for a missing one', async ({
    sandbox,
    newAccount,
  }) => {
    const owner = await newAccount();
    const stranger = await newAccount();
    const theirs = await fixtureIds(sandbox, owner);
    await owner.conversions.conversions.confirm({
      click_token: theirs.clickToken,
      order_id: 'theirs',
      value_micros: 1,
    });
    const missing = {
      campaignId: 'cmp_doesnotexist0',
      siteId: 'site_doesnotexist0',
      placementId: 'plc_doesnotexist0',
      clickToken: 'doesnotexistdoesnotexist00',
    };
    const probes: Array<[string, (ids: typeof missing) => Promise<unknown>]> = [
      ['refunds.list', (ids) => stranger.all.refunds.list({ campaign_id: ids.campaignId })],
      [
        'conversions.confirm',
        (ids) =>
          stranger.all.conversions.confirm({ click_token: ids.clickToken, order_id: 'p', value_micros: 1 }),
      ],
      [
        'conversions.refund',
        (ids) => stranger.all.conversions.refund({ campaign_id: ids.campaignId, order_id: 'theirs' }),
      ],
      ['sites.verify', (ids) => stranger.all.sites.verify(ids.siteId)],
      ['placements.list', (ids) => stranger.all.placements.list({ site_id: ids.siteId })],
      ['placements.create', (ids) => stranger.all.placements.create({ site_id: ids.siteId, name: 'x' })],
      ['placements.live', (ids) => stranger.all.placements.live(ids.placementId)],
      ['boost.claim', (ids) => stranger.all.boost.claim({ campaign_id: ids.campaignId })],
    ];
    const swap = (detail: string, from: typeof missing, to: typeof missing) =>
      Object.keys(from).reduce(
        (d, k) => d.replaceAll(from[k as keyof typeof missing], to[k as keyof typeof missing]),
        detail,
      );
    for (const [name, probe] of probes) {
      const foreign = (await probe(theirs).catch((e: unknown) => e)) as WireError;
      const absent = (await probe(missing).catch((e: unknown) => e)) as WireError;
      expect(foreign, name).toMatchObject({ status: 404 });
      expect(absent, name).toMatchObject({ status: 404 });
      expect(swap(foreign.detail ?? '', theirs, missing), name).toBe(absent.detail);
    }
    // Lists never show them either.
    expect((await stranger.all.campaigns.list()).campaigns).toEqual([]);
    expect((await stranger.all.sites.list()).sites).toEqual([]);
  });
});

describe('error bodies', () => {
  test('every error is JSON with a detail field and nothing else', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const cases = [
      await raw(sandbox, 'GET', '/v1/me'),
      await raw(sandbox, 'GET', '/v1/campaigns', { key: acct.keys.conversions }),
      await raw(sandbox, 'GET', '/v1/nothing-here', { key: acct.keys.read }),
      await raw(sandbox, 'DELETE', '/v1/campaigns', { key: acct.keys.read }),
      await raw(sandbox, 'POST', '/v1/campaigns', { key: acct.keys.write, body: '{not json' }),
      await raw(sandbox, 'POST', '/v1/sites', {
        key: acct.keys.write,
        body: { domain: 'a.example.com', extra: 1 },
      }),
      await raw(sandbox, 'GET', '/v1/placements', { key: acct.keys.read }),
      await raw(sandbox, 'GET', '/nowhere'),
    ];
    expect(cases.map((c) => c.status)).toEqual([401, 403, 404, 405, 400, 400, 400, 404]);
    for (const c of cases) {
      expect(c.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(c.json as object)).toEqual(['detail']);
    }
    expect((cases[5]!.json as { detail: string }).detail).toBe('extra: is not a known field');
    expect((cases[6]!.json as { detail: string }).detail).toBe('site_id: query parameter is required');
    expect(cases[3]?.headers.get('allow')).toBe('GET, POST');
  });

  test('no error detail ever contains the key that was sent', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const answers = [
      await raw(sandbox, 'GET', '/v1/campaigns', { key: acct.keys.conversions }),
      await raw(sandbox, 'POST', '/v1/conversions/s2s', { key: acct.keys.read, body: {} }),
      await raw(sandbox, 'GET', '/v1/me', { key: `${acct.keys.read}x` }),
    ];
    for (const a of answers) {
      for (const key of Object.values(acct.keys)) expect(JSON.stringify(a.json)).not.toContain(key.slice(5));
    }
  });
});

describe('revoked keys', () => {
  test('every /v1 route answers 401 with a detail to every key of a revoked account, until restored', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const other = await newAccount();
    const ids = await fixtureIds(sandbox, acct);
    const theirs = await campaignWithClick(sandbox, other);
    expect(await sandbox.control.revokeKeys(acct.accountId)).toEqual({
      account_id: acct.accountId,
      revoked: true,
    });
    const clients: Record<Scope, AdServiceClient> = {
      read: acct.read,
      write: acct.write,
      conversions: acct.conversions,
    };
    for (const { route, scope, call } of callsFor(ids)) {
      for (const client of [clients[scope], acct.all]) {
        const outcome = (await call(client).catch((e: unknown) => e)) as WireError;
        expect(outcome, route).toMatchObject({ status: 401, detail: expect.stringMatching(/revoked/) });
        expect(JSON.parse(outcome.text), route).toEqual({ detail: outcome.detail });
        for (const key of Object.values(acct.keys)) expect(outcome.text, route).not.toContain(key);
      }
    }
    // A refused request is never applied nor counted; other accounts are untouched.
    expect((await sandbox.control.conversions(acct.accountId)).counts.requests).toBe(0);
    await expect(
      other.conversions.conversions.confirm({
        click_token: theirs.clickToken,
        order_id: 'o',
        value_micros: 1,
      }),
    ).resolves.toMatchObject({ status: 'confirmed' });
    // Revoking twice is harmless; restoring makes the same keys work again.
    await sandbox.control.revokeKeys(acct.accountId);
    expect(await sandbox.control.restoreKeys(acct.accountId)).toEqual({
      account_id: acct.accountId,
      revoked: false,
    });
    await expect(acct.read.me.get()).resolves.toEqual({ account_id: acct.accountId, scopes: ['read'] });
    await expect(
      acct.conversions.conversions.confirm({ click_token: ids.clickToken, order_id: 'o', value_micros: 1 }),
    ).resolves.toMatchObject({ status: 'confirmed', duplicate: false });
  });

  test('POST /_sandbox/accounts/{account_id}/keys: 404 for an unknown account, 400 for a bad body', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const path = `/_sandbox/accounts/${acct.accountId}/keys`;
    expect(
      await raw(sandbox, 'POST', '/_sandbox/accounts/acct_nope/keys', { body: { revoked: true } }),
    ).toMatchObject({
      status: 404,
      json: { detail: expect.any(String) },
    });
    for (const body of [{}, { revoked: 'yes' }, { revoked: true, extra: 1 }]) {
      expect((await raw(sandbox, 'POST', path, { body })).status, JSON.stringify(body)).toBe(400);
    }
    await expect(sandbox.control.revokeKeys('acct_nope')).rejects.toMatchObject({ status: 404 });
    // A reset forgets the account, revoked or not.
    await sandbox.control.revokeKeys(acct.accountId);
    await sandbox.control.reset();
    expect((await raw(sandbox, 'POST', path, { body: { revoked: false } })).status).toBe(404);
  });
});
