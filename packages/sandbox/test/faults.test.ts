/**
 * Fault injection on /v1 (never on /_sandbox/): error statuses, 429 with Retry-After, latency, resets
 * before processing (nothing applied) and after it (applied, answer lost: the exactly-once test), and
 * fail_next. Seen on the wire: statuses, headers and dropped connections.
 */
import { describe, expect } from 'vitest';
import { campaignWithClick, raw, test, withSandbox } from './fixtures.ts';
import type { WireError } from './wire.ts';

describe('fault injection', () => {
  test('error_rate 1 answers every /v1 request with error_status and applies nothing; /_sandbox stays up', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.setFaults({ error_rate: 1 });
    const err = await acct.conversions.conversions
      .confirm({ click_token: clickToken, order_id: 'e', value_micros: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, detail: 'fault injected by the sandbox' });
    await sandbox.control.setFaults({ error_rate: 1, error_status: 500 });
    await expect(acct.read.me.get()).rejects.toMatchObject({ status: 500 });
    expect((await sandbox.control.conversions(acct.accountId)).counts.requests).toBe(0);
    await sandbox.control.clearFaults();
    await expect(acct.read.me.get()).resolves.toMatchObject({ account_id: acct.accountId });
  });

  test('an injected 429 carries Retry-After (1 s by default, retry_after_s when set)', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    await sandbox.control.setFaults({ error_rate: 1, error_status: 429 });
    const first = (await acct.read.me.get().catch((e: unknown) => e)) as WireError;
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('1');
    await sandbox.control.setFaults({ error_rate: 1, error_status: 429, retry_after_s: 7 });
    const res = await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read });
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.json).toEqual({ detail: expect.stringContaining('rate limited') });
  });

  test('latency_ms delays /v1 answers but not the control API', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    await sandbox.control.setFaults({ latency_ms: 150 });
    let started = performance.now();
    await acct.read.me.get();
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    started = performance.now();
    await sandbox.control.clock();
    expect(performance.now() - started).toBeLessThan(140);
  });

  test('reset_rate 1 drops the connection before the request is processed: nothing is confirmed', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.setFaults({ reset_rate: 1 });
    const err = await acct.conversions.conversions
      .confirm({ click_token: clickToken, order_id: 'r', value_micros: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError); // fetch failed: the socket closed without an answer
    expect((await sandbox.control.conversions(acct.accountId)).conversions).toEqual([]);
  });

  test('reset_after_rate 1 applies the confirmation and loses the answer; the retry is a duplicate, charged once', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    const body = { click_token: clickToken, order_id: 'lost-answer', value_micros: 1 };
    await sandbox.control.setFaults({ reset_after_rate: 1 });
    await expect(acct.conversions.conversions.confirm(body)).rejects.toBeInstanceOf(TypeError);
    expect((await sandbox.control.conversions(acct.accountId)).conversions).toEqual([
      expect.objectContaining({ order_id: 'lost-answer', state: 'confirmed' }),
    ]);
    await sandbox.control.clearFaults();
    await expect(acct.conversions.conversions.confirm(body)).resolves.toMatchObject({
      duplicate: true,
      campaign_id: campaignId,
    });
    const campaign = (await acct.read.campaigns.list()).campaigns[0];
    expect(campaign?.spend_micros).toBe(campaign?.bid_micros);
  });

  test('fail_next fails exactly the next N /v1 requests, then serves again', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    await sandbox.control.setFaults({ fail_next: 2, error_status: 502 });
    await expect(acct.read.me.get()).rejects.toMatchObject({ status: 502 });
    await expect(acct.read.me.get()).rejects.toMatchObject({ status: 502 });
    await expect(acct.read.me.get()).resolves.toMatchObject({ account_id: acct.accountId });
  });

  test('a rate between 0 and 1 faults the share of requests the random source picks', async () => {
    // A fixed sequence below/above 0.5, so the test is exact.
    const draws = [0.1, 0.9, 0.2, 0.8, 0.3, 0.7];
    let i = 0;
    await withSandbox({ random: () => draws[i++ % draws.length] as number }, async (sandbox, newAccount) => {
      const acct = await newAccount();
      await sandbox.control.setFaults({ error_rate: 0.5 });
      const outcomes: string[] = [];
      for (let n = 0; n < 6; n++)
        outcomes.push(
          await acct.read.me.get().then(
            () => 'ok',
            () => 'fault',
          ),
        );
      expect(outcomes).toEqual(['fault', 'ok', 'fault', 'ok', 'fault', 'ok']);
    });
  });

  test('POST /_sandbox/faults rejects unknown settings and out-of-range rates with 400', async ({
    sandbox,
  }) => {
    expect(await raw(sandbox, 'POST', '/_sandbox/faults', { body: { eror_rate: 1 } })).toMatchObject({
      status: 400,
      json: { detail: 'eror_rate: unknown fault setting' },
    });
    expect((await raw(sandbox, 'POST', '/_sandbox/faults', { body: { reset_rate: 1.5 } })).status).toBe(400);
    expect((await raw(sandbox, 'POST', '/_sandbox/faults', { body: { error_status: 200 } })).status).toBe(
      400,
    );
    expect((await raw(sandbox, 'GET', '/_sandbox/faults')).json).toMatchObject({
      error_rate: 0,
      reset_rate: 0,
    });
  });
});
