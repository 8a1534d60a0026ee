/**
 * The request log (`GET /_sandbox/requests`, `control.requests()`): every request outside `/_sandbox/`
 * with its sandbox time, the key that made it (by account and name, never the key), and the status it
 * got (`null` when a reset fault closed the connection); per-key counters that outlive the bounded log;
 * filters; `DELETE` and reset empty it.
 */
import { describe, expect } from 'vitest';
import { raw, test, withSandbox } from './fixtures.ts';

describe('the request log', () => {
  test('records each request with its key name, status and time; never the key; not the control API', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    await raw(sandbox, 'GET', '/v1/me?x=1', { key: acct.keys.read });
    await raw(sandbox, 'POST', '/v1/conversions/s2s', { key: acct.keys.read, body: {} });
    await raw(sandbox, 'GET', '/v1/me', { key: 'pbsk_unknown' });
    await raw(sandbox, 'GET', '/api/v1/me', { key: acct.keys.all });
    await sandbox.control.setFaults({ fail_next: 1, error_status: 503 });
    await raw(sandbox, 'GET', '/v1/segments', { key: acct.keys.all });
    await sandbox.control.setFaults({ reset_rate: 1 });
    await raw(sandbox, 'GET', '/v1/segments', { key: acct.keys.all }).catch(() => undefined);
    await sandbox.control.clearFaults();

    const report = await sandbox.control.requests();
    const rows = report.requests.map(({ account_id, key, method, path, status }) => [
      account_id === acct.accountId ? 'acct' : account_id,
      key,
      method,
      path,
      status,
    ]);
    expect(rows).toEqual([
      ['acct', 'read', 'GET', '/v1/me', 200],
      ['acct', 'read', 'POST', '/v1/conversions/s2s', 403],
      [null, null, 'GET', '/v1/me', 401],
      ['acct', 'all', 'GET', '/api/v1/me', 404],
      ['acct', 'all', 'GET', '/v1/segments', 503],
      ['acct', 'all', 'GET', '/v1/segments', null],
    ]);
    for (const r of report.requests) expect(Math.abs(Date.parse(r.at) - sandbox.now())).toBeLessThan(10_000);
    expect(JSON.stringify(report)).not.toMatch(/pbsk_/);
    expect(report.keys).toEqual([
      {
        account_id: acct.accountId,
        key: 'read',
        requests: 2,
        rate_limited: 0,
        statuses: { '200': 1, '403': 1 },
      },
      {
        account_id: acct.accountId,
        key: 'all',
        requests: 3,
        rate_limited: 0,
        statuses: { reset: 1, '404': 1, '503': 1 },
      },
    ]);
    expect(report.dropped).toBe(0);
  });

  test('filters by account, key name and status; DELETE and reset empty it', async ({
    sandbox,
    newAccount,
  }) => {
    const one = await newAccount();
    const two = await newAccount();
    await raw(sandbox, 'GET', '/v1/me', { key: one.keys.read });
    await raw(sandbox, 'GET', '/v1/me', { key: one.keys.conversions });
    await raw(sandbox, 'GET', '/v1/me', { key: two.keys.read });
    await sandbox.control.setFaults({ reset_rate: 1 });
    await raw(sandbox, 'GET', '/v1/me', { key: two.keys.read }).catch(() => undefined);
    await sandbox.control.clearFaults();

    const byAccount = await sandbox.control.requests({ accountId: one.accountId });
    expect(byAccount.requests.map((r) => r.key)).toEqual(['read', 'conversions']);
    expect(byAccount.keys.map((k) => k.key)).toEqual(['read', 'conversions']);
    expect((await sandbox.control.requests({ key: 'read' })).requests).toHaveLength(3);
    expect((await sandbox.control.requests({ status: 403 })).requests).toHaveLength(1);
    expect((await sandbox.control.requests({ status: 'reset' })).requests).toEqual([
      expect.objectContaining({ account_id: two.accountId, status: null }),
    ]);
    for (const query of ['key=admin', 'status=abc', 'status=99']) {
      expect((await raw(sandbox, 'GET', `/_sandbox/requests?${query}`)).status).toBe(400);
    }

    expect(await sandbox.control.clearRequests()).toEqual({ requests: [], keys: [], dropped: 0 });
    await raw(sandbox, 'GET', '/v1/me', { key: one.keys.read });
    expect((await sandbox.control.requests()).keys).toEqual([
      expect.objectContaining({ key: 'read', requests: 1 }),
    ]);
    await sandbox.control.reset();
    expect(await sandbox.control.requests()).toEqual({ requests: [], keys: [], dropped: 0 });
  });

  test('keeps the last requestLogSize requests, counts the dropped ones, and keeps every key count', async () => {
    await withSandbox({ requestLogSize: 3 }, async (sandbox, newAccount) => {
      const acct = await newAccount();
      for (const path of ['/v1/me', '/v1/sites', '/v1/segments', '/v1/credits', '/v1/boost'])
        await raw(sandbox, 'GET', path, { key: acct.keys.read });
      const report = await sandbox.control.requests();
      expect(report.requests.map((r) => r.path)).toEqual(['/v1/segments', '/v1/credits', '/v1/boost']);
      expect(report.dropped).toBe(2);
      expect(report.keys[0]).toMatchObject({ requests: 5, statuses: { '200': 5 } });
    });
  });
});
