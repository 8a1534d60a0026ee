/**
 * Response variants, each over real HTTP with raw fetch: what is on the wire (status, content type,
 * bytes), and what the sandbox applied, read from the control API's conversion report (the oracle).
 * Also how variants are set: at creation, through `/_sandbox/variants` and the control client, and that
 * reset brings back the creation's variants.
 */
import { describe, expect } from 'vitest';
import {
  EXTRA_FIELDS,
  HTML_404,
  type RunningSandbox,
  SANDBOX_VARIANTS,
  SandboxOptionsError,
  startSandbox,
} from '../src/index.ts';
import { campaignWithClick, raw, type TestAccount, test, withSandbox } from './fixtures.ts';
import type { Json } from './wire.ts';

async function confirmRaw(sandbox: RunningSandbox, acct: TestAccount, clickToken: string, orderId: string) {
  return raw(sandbox, 'POST', '/v1/conversions/s2s', {
    key: acct.keys.conversions,
    body: { click_token: clickToken, order_id: orderId, value_micros: 1_000 },
  });
}

/** Every object in `value`, at every level. */
function objects(value: Json): Json[] {
  if (Array.isArray(value)) return value.flatMap(objects);
  if (value === null || typeof value !== 'object') return [];
  return [value, ...Object.values(value).flatMap(objects)];
}

describe('response variants', () => {
  test('no variant by default: answers are JSON with exactly the documented fields', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    expect(await sandbox.control.variants()).toEqual({ variants: [], available: [...SANDBOX_VARIANTS] });
    const res = await confirmRaw(sandbox, acct, clickToken, 'o1');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.json).sort()).toEqual(
      ['campaign_id', 'confirmed_at', 'duplicate', 'order_id', 'status', 'value_micros'].sort(),
    );
    expect(res.json.campaign_id).toBe(campaignId);
  });

  test('extra-fields adds unknown fields to every object at every level, errors included', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.setVariants(['extra-fields']);
    const list = await raw(sandbox, 'GET', '/v1/campaigns', { key: acct.keys.read });
    const all = objects(list.json);
    // the list, the campaign, its creative (the extras' own objects are not walked again)
    expect(all.filter((o) => 'x_extra' in o)).toHaveLength(3);
    expect(list.json.campaigns[0].creatives[0]).toMatchObject(EXTRA_FIELDS);
    expect(list.json.campaigns[0]).toMatchObject({ status: 'review', ...EXTRA_FIELDS });
    const confirmed = await confirmRaw(sandbox, acct, clickToken, 'o1');
    expect(confirmed.json).toMatchObject({ order_id: 'o1', status: 'confirmed', ...EXTRA_FIELDS });
    const error = await raw(sandbox, 'GET', '/v1/refunds', { key: acct.keys.read });
    expect(error.status).toBe(400);
    expect(error.json).toEqual({ detail: expect.stringMatching(/^campaign_id: /), ...EXTRA_FIELDS });
    // The stored records are untouched: without the variant, no extra field.
    await sandbox.control.clearVariants();
    const plain = await raw(sandbox, 'GET', '/v1/campaigns', { key: acct.keys.read });
    expect(JSON.stringify(plain.json)).not.toContain('x_extra');
  });

  test('unknown-enums shows a status, a conversion source and formats the client does not know', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const s2s = await campaignWithClick(sandbox, acct);
    const pixel = await campaignWithClick(sandbox, acct, { conversion_source: 'pixel' });
    const site = await acct.write.sites.create({ domain: 'enums.example.com' });
    await acct.write.placements.create({ site_id: site.id, name: 'top' });
    await sandbox.control.setVariants(['unknown-enums']);
    const { json } = await raw(sandbox, 'GET', '/v1/campaigns', { key: acct.keys.read });
    const byId = new Map<string, Json>(json.campaigns.map((c: Json) => [c.id, c]));
    expect(byId.get(s2s.campaignId)).toMatchObject({
      status: 'learning',
      conversion_source: 's2s', // what the kit acts on stays
      creatives: [expect.objectContaining({ format: 'banner' })],
    });
    expect(byId.get(pixel.campaignId)).toMatchObject({ status: 'learning', conversion_source: 'app' });
    const placements = await raw(sandbox, 'GET', `/v1/placements?site_id=${site.id}`, {
      key: acct.keys.read,
    });
    expect(placements.json.placements[0].format).toBe('banner');
    // Only the answers change: confirmations of the s2s campaign still apply.
    expect((await confirmRaw(sandbox, acct, s2s.clickToken, 'o1')).status).toBe(200);
    expect(await sandbox.control.conversion('o1')).toMatchObject({ state: 'confirmed' });
  });

  test('no-campaign-id drops campaign_id from the confirmation, which is still applied', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.setVariants(['no-campaign-id']);
    const res = await confirmRaw(sandbox, acct, clickToken, 'o1');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ order_id: 'o1', status: 'confirmed' });
    expect(res.json).not.toHaveProperty('campaign_id');
    expect(await sandbox.control.conversion('o1')).toMatchObject({
      campaign_id: campaignId,
      charged_micros: 2_000_000,
      state: 'confirmed',
    });
    // The reversal answer keeps it (the variant is about the confirmation).
    const reversed = await raw(sandbox, 'POST', '/v1/conversions/s2s/refund', {
      key: acct.keys.conversions,
      body: { campaign_id: campaignId, order_id: 'o1' },
    });
    expect(reversed.json.campaign_id).toBe(campaignId);
  });

  test('empty-body answers s2s with a 200 and no bytes; the confirmation and reversal are applied', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.setVariants(['empty-body']);
    const res = await confirmRaw(sandbox, acct, clickToken, 'o1');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await sandbox.control.conversion('o1')).toMatchObject({ state: 'confirmed' });
    const reversal = await raw(sandbox, 'POST', '/v1/conversions/s2s/refund', {
      key: acct.keys.conversions,
      body: { campaign_id: campaignId, order_id: 'o1' },
    });
    expect([reversal.status, reversal.text]).toEqual([200, '']);
    expect(await sandbox.control.conversion('o1')).toMatchObject({ state: 'reversed' });
    // Other endpoints and errors keep their JSON.
    expect((await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read })).json).toMatchObject({
      account_id: acct.accountId,
    });
    const refused = await confirmRaw(sandbox, acct, 'no-such-token', 'o2');
    expect(refused).toMatchObject({ status: 404, json: { detail: expect.any(String) } });
  });

  test('text-body answers s2s with a text/html "OK"; the confirmation is applied', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.setVariants(['text-body']);
    const res = await confirmRaw(sandbox, acct, clickToken, 'o1');
    expect([res.status, res.text]).toEqual([200, 'OK']);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await sandbox.control.conversion('o1')).toMatchObject({ state: 'confirmed' });
  });

  test('html-404 answers every 404 outside /_sandbox/ with an HTML page and no detail', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    await sandbox.control.setVariants(['html-404']);
    for (const [method, path] of [
      ['POST', '/api/v1/conversions/s2s'], // a wrong base path
      ['GET', '/v1/nothing-here'],
      ['GET', '/v1/placements/plc_missing/live'], // an object that does not exist
    ] as const) {
      const res = await raw(sandbox, method, path, {
        key: acct.keys.all,
        body: method === 'POST' ? {} : undefined,
      });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(res.text, path).toBe(HTML_404);
    }
    // Other errors and the control API keep their JSON detail.
    const forbidden = await raw(sandbox, 'GET', '/v1/campaigns', { key: acct.keys.conversions });
    expect(forbidden).toMatchObject({ status: 403, json: { detail: expect.any(String) } });
    expect(await raw(sandbox, 'GET', '/_sandbox/nothing')).toMatchObject({
      status: 404,
      json: { detail: expect.any(String) },
    });
  });

  test('echo-key puts the bearer key of the request in the detail of every /v1 error', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    await sandbox.control.setVariants(['echo-key']);
    const wrongKey = `${acct.keys.read}-wrong`;
    const answers = [
      await raw(sandbox, 'GET', '/v1/me', { key: wrongKey }),
      await raw(sandbox, 'GET', '/v1/campaigns', { key: acct.keys.conversions }),
      await confirmRaw(sandbox, acct, 'no-such-token', 'o1'),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 403, 404]);
    expect(answers[0]?.json.detail).toContain(wrongKey);
    expect(answers[1]?.json.detail).toContain(acct.keys.conversions);
    expect(answers[2]?.json.detail).toContain(acct.keys.conversions);
    // Injected faults echo it too.
    await sandbox.control.setFaults({ fail_next: 1 });
    const fault = await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read });
    expect(fault).toMatchObject({ status: 503, json: { detail: expect.stringContaining(acct.keys.read) } });
    // Successes do not carry it.
    const me = await raw(sandbox, 'GET', '/v1/me', { key: acct.keys.read });
    expect(me.text).not.toContain(acct.keys.read);
  });

  test('refuse-key refuses every confirmation with a 422 whose detail holds the key, applying nothing', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.setVariants(['refuse-key']);
    const res = await confirmRaw(sandbox, acct, clickToken, 'o1');
    expect(res.status).toBe(422);
    expect(res.json).toEqual({
      detail: `key ${acct.keys.conversions} is not allowed to confirm conversions`,
    });
    const report = await sandbox.control.conversions(acct.accountId);
    expect(report.conversions).toEqual([]);
    expect(report.counts).toMatchObject({ requests: 1, rejections: 1 });
    await sandbox.control.clearVariants();
    expect((await confirmRaw(sandbox, acct, clickToken, 'o1')).status).toBe(200);
  });

  test('several variants at once: extra fields on a confirmation without campaign_id', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct);
    const set = await sandbox.control.setVariants(['no-campaign-id', 'extra-fields']);
    expect(set.variants).toEqual(['extra-fields', 'no-campaign-id']); // canonical order
    const res = await confirmRaw(sandbox, acct, clickToken, 'o1');
    expect(res.json).toMatchObject({ order_id: 'o1', ...EXTRA_FIELDS });
    expect(res.json).not.toHaveProperty('campaign_id');
  });
});

describe('setting variants', () => {
  test('POST /_sandbox/variants refuses unknown names, unknown fields and empty-body with text-body', async ({
    sandbox,
  }) => {
    for (const body of [
      { variants: ['nope'] },
      { variants: 'extra-fields' },
      { variants: ['empty-body', 'text-body'] },
      { variants: [], extra: 1 },
    ]) {
      const res = await raw(sandbox, 'POST', '/_sandbox/variants', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.detail).toMatch(/^(variants|extra): /);
    }
    expect((await sandbox.control.variants()).variants).toEqual([]);
  });

  test('variants given at creation are on from the start and come back on reset', async () => {
    await withSandbox({ variants: ['html-404', 'echo-key'] }, async (sandbox) => {
      expect((await sandbox.control.variants()).variants).toEqual(['html-404', 'echo-key']);
      expect((await raw(sandbox, 'GET', '/nowhere')).text).toBe(HTML_404);
      await sandbox.control.clearVariants();
      expect((await raw(sandbox, 'GET', '/nowhere')).json).toEqual({ detail: expect.any(String) });
      await sandbox.control.reset();
      expect((await sandbox.control.variants()).variants).toEqual(['html-404', 'echo-key']);
    });
  });

  test('startSandbox refuses an unknown variant with SandboxOptionsError naming variants', async () => {
    await expect(startSandbox({ variants: ['bogus' as never] })).rejects.toThrow(SandboxOptionsError);
    await expect(startSandbox({ variants: ['empty-body', 'text-body'] })).rejects.toMatchObject({
      field: 'variants',
    });
  });
});

describe('faults for retry tests', () => {
  test('a 503 with Retry-After: 600 (error_status 503, retry_after_s 600), nothing applied', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.setFaults({ error_rate: 1, error_status: 503, retry_after_s: 600 });
    const res = await confirmRaw(sandbox, acct, clickToken, 'o1');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('600');
    expect(await sandbox.control.conversion('o1')).toBeUndefined();
  });
});
