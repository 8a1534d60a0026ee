/**
 * The sandbox README's curl tour ("A tour with curl") runs as written: its ```sh blocks are replayed in
 * order (`replayTour`, no shell needed) against a sandbox on an ephemeral port and a stand-in shop for
 * `127.0.0.1:3000`, and what the sandbox applied is checked: a confirmed conversion of the s2s campaign,
 * charged its bid, then reversed.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type RunningSandbox, startSandbox } from '@postback/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedBlocks } from './helpers/readme-blocks.ts';
import { replayTour } from './helpers/sh-tour.ts';

const README = join(import.meta.dirname, '..', 'packages', 'sandbox', 'README.md');

function tour(): string {
  const section = readFileSync(README, 'utf8')
    .split(/^## /m)
    .find((s) => s.startsWith('A tour with curl'));
  if (!section) throw new Error('packages/sandbox/README.md has no section "A tour with curl"');
  return fencedBlocks(section, ['sh'])
    .map((b) => b.code)
    .join('\n');
}

let sandbox: RunningSandbox;
let shop: Server;
const landings: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  shop = createServer((req, res) => {
    landings.push(req.url ?? '');
    res.end('Welcome, ad visitor');
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => shop?.close(resolve));
  await sandbox?.close();
});

describe('the sandbox README tour', () => {
  it('goes from an account to a confirmed, then reversed, conversion', async () => {
    const { vars, requests } = await replayTour(tour(), {
      '127.0.0.1:4010': new URL(sandbox.url).host,
      '127.0.0.1:3000': `127.0.0.1:${(shop.address() as AddressInfo).port}`,
    });
    for (const r of requests) expect(r.status, `${r.method} ${r.url}: ${r.body}`).toBeLessThan(300);

    const campaign = vars.get('CAMPAIGN') ?? '';
    const token = vars.get('TOKEN') ?? '';
    expect(campaign).toMatch(/^cmp_/);
    expect(landings).toEqual([`/shoes?click_token=${token}`]);

    const confirm = requests.find((r) => r.url.endsWith('/v1/conversions/s2s'));
    expect(JSON.parse(confirm?.body ?? '{}')).toMatchObject({ campaign_id: campaign, status: 'confirmed' });
    const { conversions } = await sandbox.control.conversions();
    expect(conversions).toMatchObject([
      {
        order_id: 'ord-1',
        campaign_id: campaign,
        value_micros: 12_340_000,
        charged_micros: 2_000_000,
        state: 'reversed',
      },
    ]);
    expect(requests.at(-1)?.url).toContain('/_sandbox/conversions?order_id=ord-1');
  });
});
