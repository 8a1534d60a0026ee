/**
 * `postback sandbox --variant`: the response variants reach the running sandbox (repeatable and
 * comma-separated), show in its banner and its control API, and an unknown or conflicting name is a
 * usage error (exit 2). Real HTTP on an ephemeral port, raw fetch.
 */
import { describe, expect, test } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';

async function waitFor<T>(read: () => T | undefined, ms = 5_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('postback sandbox --variant', () => {
  test('turns on every variant given, repeated or comma-separated, and the sandbox answers with them', async () => {
    const io = captureIo();
    const exit = main(
      ['sandbox', '--port', '0', '--variant', 'html-404,no-campaign-id', '--variant', 'extra-fields'],
      io,
    );
    try {
      const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(io.out())?.[1]);
      expect(io.out()).toContain('response variants: extra-fields, no-campaign-id, html-404');
      const variants = (await (await fetch(`${url}/_sandbox/variants`)).json()) as { variants: string[] };
      expect(variants.variants).toEqual(['extra-fields', 'no-campaign-id', 'html-404']);
      // A wrong base path gets an HTML 404 without detail, as a proxy would answer.
      const wrong = await fetch(`${url}/api/v1/conversions/s2s`, { method: 'POST', body: '{}' });
      expect(wrong.status).toBe(404);
      expect(wrong.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await wrong.text()).not.toContain('detail');
      // The confirmation answer carries extra fields and no campaign_id.
      const { keys } = (await (
        await fetch(`${url}/_sandbox/accounts`, { method: 'POST', body: '{}' })
      ).json()) as {
        keys: { all: string };
      };
      const headers = { authorization: `Bearer ${keys.all}`, 'content-type': 'application/json' };
      const campaign = (await (
        await fetch(`${url}/v1/campaigns`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            name: 'cli',
            pricing_model: 'cpa',
            bid_micros: 1,
            total_budget_micros: 10,
            conversion_source: 's2s',
            creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://shop.example/' }],
          }),
        })
      ).json()) as { id: string };
      const click = (await (
        await fetch(`${url}/_sandbox/clicks`, {
          method: 'POST',
          body: JSON.stringify({ campaign_id: campaign.id }),
        })
      ).json()) as { click_token: string };
      const confirmed = await fetch(`${url}/v1/conversions/s2s`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ click_token: click.click_token, order_id: 'o1', value_micros: 5 }),
      });
      const body = (await confirmed.json()) as Record<string, unknown>;
      expect(confirmed.status).toBe(200);
      expect(body).toHaveProperty('x_extra');
      expect(body).not.toHaveProperty('campaign_id');
    } finally {
      io.controller.abort();
      expect(await exit).toBe(0);
    }
  });

  test.each([
    [['--variant', 'nope'], "unknown variant 'nope'"],
    [['--variant', 'extra-fields,'], "unknown variant ''"],
    [['--variant', 'empty-body', '--variant', 'text-body'], '--variant'],
  ])('%j is a usage error (exit 2): %s', async (args, message) => {
    const io = captureIo();
    expect(await main(['sandbox', '--port', '0', ...args], io)).toBe(2);
    expect(io.err()).toContain(message);
  });

  test('--help lists every variant', async () => {
    const io = captureIo();
    expect(await main(['sandbox', '--help'], io)).toBe(0);
    for (const name of ['extra-fields', 'unknown-enums', 'no-campaign-id', 'empty-body', 'text-body'])
      expect(io.out()).toContain(name);
    expect(io.out()).toContain('html-404');
    expect(io.out()).toContain('refuse-key');
  });
});
