/**
 * Many advertiser accounts (a Dispatcher with `apiKeyFor`), scraped over real HTTP: a refused key pauses
 * one account, which shows as `postback_account_paused{account}` and in `/healthz` while `/readyz` stays
 * 200 (the other accounts deliver); the series goes once the account resumes. The `account` label of the
 * outcome counters is opt-in and bounded by `accountLabelLimit`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type DeliveryWorld, parsePrometheusText, startDeliveryWorld } from '../test/delivery-world.ts';
import { type MetricsServer, serveMetrics } from './handler.ts';
import { createPrometheusMetrics } from './prometheus.ts';

let world: DeliveryWorld | undefined;
let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  await world?.close();
  server = undefined;
  world = undefined;
});

async function scrape(url: string): Promise<{ text: string; samples: Map<string, number> }> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, samples: parsePrometheusText(text) };
}

describe('paused accounts', () => {
  it('shows one paused account as a gauge and in /healthz, keeps /readyz 200, and drops it on resume', async () => {
    const keys = new Map<string, 'valid' | string>([
      ['shop-good', 'valid'],
      ['shop-bad', 'refused-key-0123456789'],
    ]);
    world = await startDeliveryWorld({
      authPauseMs: 300,
      apiKeyFor: (account, validKey) => {
        const key = keys.get(account ?? '');
        return key === 'valid' ? validKey : key;
      },
    });
    await world.enqueue(3, 'good', 'shop-good');
    await world.enqueue(2, 'bad', 'shop-bad');
    const metrics = createPrometheusMetrics({ dispatcher: world.dispatcher, outbox: world.outbox });
    server = await serveMetrics(metrics, { port: 0 });

    const before = await scrape(server.url);
    expect(before.samples.get('postback_paused_accounts')).toBe(0);
    expect(before.samples.get('postback_account_pauses_total')).toBe(0);
    expect(before.text).not.toContain('postback_account_paused{');

    await world.dispatcher.drain();
    expect(world.dispatcher.state).not.toBe('paused');
    const paused = await scrape(server.url);
    expect(paused.samples.get('postback_account_paused{account="shop-bad"}')).toBe(1);
    expect(paused.samples.has('postback_account_paused{account="shop-good"}')).toBe(false);
    expect(paused.samples.get('postback_paused_accounts')).toBe(1);
    expect(paused.samples.get('postback_account_pauses_total')).toBe(1);
    expect(paused.samples.get('postback_delivery_paused')).toBe(0);
    expect(paused.samples.get('postback_jobs_delivered_total{kind="confirm"}')).toBe(3);
    // The outcome counters carry no account label unless asked for.
    expect(paused.text).not.toMatch(/jobs_delivered_total\{[^}]*account=/);
    expect(paused.text).not.toContain('refused-key-0123456789');

    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const body = await health.json();
    expect(body).toMatchObject({
      alive: true,
      pausedAccounts: [{ account: 'shop-bad', status: 401, reason: expect.any(String) }],
    });
    expect(new Date(body.pausedAccounts[0].since).getTime()).toBeLessThanOrEqual(Date.now());
    expect(JSON.stringify(body)).not.toContain('refused-key-0123456789');

    // The key is fixed: the account's probe is answered, it resumes and its series goes.
    keys.set('shop-bad', 'valid');
    await new Promise((resolve) => setTimeout(resolve, 350));
    await world.dispatcher.drain();
    const resumed = await scrape(server.url);
    expect(resumed.text).not.toContain('postback_account_paused{');
    expect(resumed.samples.get('postback_paused_accounts')).toBe(0);
    expect(resumed.samples.get('postback_account_pauses_total')).toBe(1);
    expect(resumed.samples.get('postback_jobs_delivered_total{kind="confirm"}')).toBe(5);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ alive: true, pausedAccounts: [] });
  });

  it('is 503 at /readyz for the global pause (one key refused) as before', async () => {
    world = await startDeliveryWorld({ authPauseMs: 60_000 });
    await world.enqueue(1, 'global');
    const metrics = createPrometheusMetrics({ dispatcher: world.dispatcher, outbox: world.outbox });
    server = await serveMetrics(metrics, { port: 0 });
    await world.world.setFaults({ error_rate: 1, error_status: 401 });
    await world.dispatcher.runOnce();
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, reason: 'paused' });
    const { samples } = await scrape(server.url);
    expect(samples.get('postback_delivery_paused')).toBe(1);
    expect(samples.get('postback_paused_accounts')).toBe(0);
  });
});

describe('the account label of the outcome counters', () => {
  it('labels delivered jobs by account when asked, the first accountLabelLimit accounts only', async () => {
    world = await startDeliveryWorld({ apiKeyFor: (_account, validKey) => validKey });
    await world.enqueue(2, 'a', 'shop-a');
    await world.enqueue(2, 'b', 'shop-b');
    await world.enqueue(2, 'c', 'shop-c');
    await world.enqueue(1, 'none');
    const metrics = createPrometheusMetrics({
      dispatcher: world.dispatcher,
      outbox: world.outbox,
      accountLabel: true,
      accountLabelLimit: 2,
    });
    server = await serveMetrics(metrics, { port: 0 });
    await world.dispatcher.drain();
    const { samples } = await scrape(server.url);
    const delivered = [...samples].filter(([name]) => name.startsWith('postback_jobs_delivered_total{'));
    const accounts = delivered.map(([name]) => /account="([^"]*)"/.exec(name)?.[1]);
    expect(delivered.reduce((sum, [, n]) => sum + n, 0)).toBe(7);
    // Two accounts of their own (whichever were delivered first), every later one counted as `other`.
    expect(accounts).toHaveLength(3);
    expect(accounts).toContain('other');
    for (const a of accounts) expect(['shop-a', 'shop-b', 'shop-c', '', 'other']).toContain(a);
    // The latency histogram never takes the account.
    expect(
      [...samples.keys()].filter((n) => n.startsWith('postback_send_duration') && n.includes('account')),
    ).toEqual([]);
  });

  it('labels jobs without an account with account=""', async () => {
    world = await startDeliveryWorld({ apiKeyFor: (_account, validKey) => validKey });
    await world.enqueue(2, 'none');
    const metrics = createPrometheusMetrics({
      dispatcher: world.dispatcher,
      outbox: world.outbox,
      accountLabel: true,
    });
    await world.dispatcher.drain();
    const samples = parsePrometheusText(await metrics.scrape());
    expect(samples.get('postback_jobs_delivered_total{kind="confirm",account=""}')).toBe(2);
    metrics.close();
  });

  it('refuses a bad accountLabelLimit', () => {
    const dispatcher = { on: () => () => {} };
    const outbox = { stats: async () => ({}) as never };
    expect(() =>
      createPrometheusMetrics({ dispatcher, outbox, accountLabel: true, accountLabelLimit: 0 }),
    ).toThrow(/accountLabelLimit/);
  });
});
