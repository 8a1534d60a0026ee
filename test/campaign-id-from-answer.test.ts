/**
 * A confirmation's answer names the campaign the conversion was attributed to, and the Dispatcher stores
 * that `campaign_id` with the job (it is what a later reversal sends). A service or a proxy that answers
 * 200 with something else there, the API key above all, must not get it stored: a campaign id taken from
 * an answer has the form `cmp_<id>` and is no secret the Dispatcher knows of, or the campaign stays
 * unknown (null), as when the answer carries none. Real HTTP to a tiny service on an ephemeral port, the
 * real client, a real SQLite outbox file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { createClient } from '@postback/client';
import { createDispatcher } from '@postback/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxFile, type OutboxFile } from './helpers/outbox-file.ts';

const KEY = 'pbsk_live_CAMPAIGNSECRET_0123456789abcdef';
/** A key that happens to have the form of a campaign id. */
const CMP_SHAPED_KEY = 'cmp_KEYSHAPEDSECRET_0123456789';

let db: OutboxFile | undefined;
let server: Server | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
  await db?.cleanup();
  db = undefined;
});

/** A service answering every confirmation 200 with `{ campaign_id: campaignId(key of the request) }`. */
async function serviceAnswering(campaignId: (bearer: string) => unknown): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ campaign_id: campaignId(bearer), status: 'confirmed' }));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Every byte of the outbox's files (the database and its WAL), as text. */
function fileText(file: string): string {
  const dir = dirname(file);
  return readdirSync(dir)
    .map((name) => readFileSync(join(dir, name)).toString('latin1'))
    .join('\n');
}

/** Confirms one order, delivers it with `options` and returns the stored job. */
async function deliverOne(baseUrl: string, apiKey: string, account?: string, keys?: Record<string, string>) {
  db = createOutboxFile('postback-campaign-id-');
  const { outbox } = db;
  await outbox.confirm({
    orderId: 'ord_1',
    valueMicros: 1_000,
    click: { token: 'tok_campaign_id_answer_XyZ', clickedAt: Date.now() - 60_000 },
    ...(account === undefined ? {} : { account }),
  });
  const client = createClient({ baseUrl, apiKey });
  cleanups.push(() => client.close());
  const dispatcher = createDispatcher({
    outbox,
    client,
    ...(keys === undefined ? {} : { apiKeyFor: (a: string | null) => (a === null ? undefined : keys[a]) }),
  });
  const delivered: Array<string | null> = [];
  dispatcher.on('delivered', ({ campaignId }) => delivered.push(campaignId));
  const summary = await dispatcher.drain();
  expect(summary.delivered).toBe(1);
  const [job] = await outbox.getByOrder('ord_1', account ?? null);
  return { job, delivered, file: db.file };
}

describe('the campaign id of a confirmation answer', () => {
  it('is stored when it has the form cmp_<id>', async () => {
    const url = await serviceAnswering(() => 'cmp_8f3a');
    const { job, delivered } = await deliverOne(url, KEY);
    expect(job).toMatchObject({ state: 'delivered', campaignId: 'cmp_8f3a' });
    expect(delivered).toEqual(['cmp_8f3a']);
  });

  it('is unknown, not stored, when the answer puts the API key there', async () => {
    const url = await serviceAnswering((bearer) => bearer);
    const { job, delivered, file } = await deliverOne(url, KEY);
    expect(job).toMatchObject({ state: 'delivered', campaignId: null });
    expect(delivered).toEqual([null]);
    await db?.outbox.close();
    expect(fileText(file)).not.toContain('CAMPAIGNSECRET');
  });

  it('is unknown when it has the form of a campaign id but is the client key', async () => {
    const url = await serviceAnswering((bearer) => bearer);
    const { job, delivered, file } = await deliverOne(url, CMP_SHAPED_KEY);
    expect(job).toMatchObject({ state: 'delivered', campaignId: null });
    expect(delivered).toEqual([null]);
    await db?.outbox.close();
    expect(fileText(file)).not.toContain('KEYSHAPEDSECRET');
  });

  it("is unknown when it is the key of the job's account (per-account keys)", async () => {
    const url = await serviceAnswering((bearer) => bearer);
    const { job, delivered, file } = await deliverOne(url, KEY, 'shop-a', { 'shop-a': CMP_SHAPED_KEY });
    expect(job).toMatchObject({ state: 'delivered', campaignId: null });
    expect(delivered).toEqual([null]);
    await db?.outbox.close();
    expect(fileText(file)).not.toContain('KEYSHAPEDSECRET');
  });

  it('is unknown when it is not a campaign id at all (a number, an object, a bearer token)', async () => {
    const answers: unknown[] = [
      42,
      { id: 'cmp_1' },
      'Bearer abc',
      'cmp_',
      'cmp_with space',
      `cmp_${'x'.repeat(300)}`,
    ];
    let i = 0;
    const url = await serviceAnswering(() => answers[i++]);
    db = createOutboxFile('postback-campaign-id-');
    const { outbox } = db;
    for (const [n] of answers.entries()) {
      await outbox.confirm({
        orderId: `ord_${n}`,
        valueMicros: 1_000,
        click: { token: `tok_campaign_id_answer_${n}`, clickedAt: Date.now() - 60_000 },
      });
    }
    const client = createClient({ baseUrl: url, apiKey: KEY });
    cleanups.push(() => client.close());
    const summary = await createDispatcher({ outbox, client, concurrency: 1 }).drain();
    expect(summary.delivered).toBe(answers.length);
    for (const [n] of answers.entries()) {
      const [job] = await outbox.getByOrder(`ord_${n}`);
      expect(job).toMatchObject({ state: 'delivered', campaignId: null });
    }
  });
});
