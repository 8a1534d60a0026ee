/**
 * The rate-limit fault over HTTP: N `/v1` requests per second per API key, then 429 with `Retry-After`
 * and a JSON detail, nothing applied; set by `POST /_sandbox/faults`, the `faults` option (restored by
 * reset) or `postback sandbox --rate-limit`; counted per key in `GET /_sandbox/requests`. The sandbox
 * clock is injected, so every window is exact.
 */
import { describe, expect } from 'vitest';
import { SandboxOptionsError, startSandbox } from '../src/index.ts';
import { campaignWithClick, raw, test, withSandbox } from './fixtures.ts';

const T0 = Date.UTC(2030, 0, 1);

describe('the rate-limit fault', () => {
  test('answers the request over the limit 429 with Retry-After and a detail, applies nothing, counts it per key', async () => {
    await withSandbox({ now: () => T0 }, async (sandbox, newAccount) => {
      const acct = await newAccount();
      const { clickToken } = await campaignWithClick(sandbox, acct);
      expect(await sandbox.control.setFaults({ rate_limit_per_s: 3 })).toMatchObject({ rate_limit_per_s: 3 });
      const confirm = (orderId: string) =>
        raw(sandbox, 'POST', '/v1/conversions/s2s', {
          key: acct.keys.conversions,
          body: { click_token: clickToken, order_id: orderId, value_micros: 1 },
        });

      expect((await Promise.all(['a', 'b', 'c'].map(confirm))).map((r) => r.status)).toEqual([200, 200, 200]);
      const limited = await confirm('d');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('1');
      expect(limited.json).toEqual({
        detail: 'rate limit exceeded: at most 3 requests per second per API key; retry after 1 s',
      });
      expect(limited.text).not.toContain(acct.keys.conversions);
      expect(await sandbox.control.conversion('d')).toBeUndefined();
      // Another key of the same account has its own window.
      expect((await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read })).status).toBe(200);

      sandbox.advance(1_000);
      expect((await confirm('d')).status).toBe(200);

      const report = await sandbox.control.requests({ accountId: acct.accountId, key: 'conversions' });
      expect(report.keys).toEqual([
        {
          account_id: acct.accountId,
          key: 'conversions',
          requests: 5,
          rate_limited: 1,
          statuses: { '200': 4, '429': 1 },
        },
      ]);
      const refused = await sandbox.control.requests({ status: 429 });
      expect(refused.requests).toEqual([
        {
          at: new Date(T0).toISOString(),
          account_id: acct.accountId,
          key: 'conversions',
          method: 'POST',
          path: '/v1/conversions/s2s',
          status: 429,
        },
      ]);
    });
  });

  test('with retry_after_s the key is refused for that long, its Retry-After counting down', async () => {
    await withSandbox({ now: () => T0 }, async (sandbox, newAccount) => {
      const acct = await newAccount();
      await sandbox.control.setFaults({ rate_limit_per_s: 1, retry_after_s: 30 });
      const me = () => raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read });
      expect((await me()).status).toBe(200);
      expect((await me()).headers.get('retry-after')).toBe('30');
      sandbox.advance(10_000);
      const later = await me();
      expect([later.status, later.headers.get('retry-after')]).toEqual([429, '20']);
      sandbox.advance(20_000);
      expect((await me()).status).toBe(200);
      const [counts] = (await sandbox.control.requests({ key: 'read' })).keys;
      expect(counts).toMatchObject({ requests: 4, rate_limited: 2 });
    });
  });

  test('is checked after authentication: an unknown key is a 401, never a 429', async () => {
    await withSandbox({ faults: { rate_limit_per_s: 1 } }, async (sandbox) => {
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await raw(sandbox, 'GET', '/v1/me', { key: 'pbsk_nope' })).status);
      expect(statuses).toEqual([401, 401, 401]);
    });
  });

  test('the faults option turns it on from the start, reset brings it back, a bad one names the option', async () => {
    await withSandbox({ now: () => T0, faults: { rate_limit_per_s: 1 } }, async (sandbox, newAccount) => {
      expect(await sandbox.control.faults()).toMatchObject({ rate_limit_per_s: 1, error_rate: 0 });
      let acct = await newAccount();
      expect((await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read })).status).toBe(200);
      expect((await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read })).status).toBe(429);
      await sandbox.control.clearFaults();
      expect((await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read })).status).toBe(200);
      await sandbox.control.reset();
      expect((await sandbox.control.faults()).rate_limit_per_s).toBe(1);
      acct = await newAccount();
      expect((await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read })).status).toBe(200);
      expect((await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read })).status).toBe(429);
    });
    for (const faults of [
      { rate_limit_per_s: 0 },
      { rate_limit_per_s: 1.5 },
      { rate_limits: 1 },
      [] as never,
    ]) {
      const error = await startSandbox({ faults }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxOptionsError);
      expect(error).toMatchObject({ field: 'faults' });
    }
  });

  test('POST /_sandbox/faults refuses a rate limit that is not a positive integer', async ({ sandbox }) => {
    for (const value of [0, -1, 2.5, '5', 100_001]) {
      const res = await raw(sandbox, 'POST', '/_sandbox/faults', { body: { rate_limit_per_s: value } });
      expect(res).toMatchObject({
        status: 400,
        json: { detail: 'rate_limit_per_s: must be an integer from 1 to 100000' },
      });
    }
  });
});
