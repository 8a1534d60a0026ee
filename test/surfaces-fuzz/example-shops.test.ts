/**
 * The example shops (Express, Koa, Fastify) under the hostile requests every HTTP surface gets
 * (`hostile-requests.ts`): each is started as its README starts it (`createShop`, a SQLite outbox in a
 * temp dir; the in-process worker off, nothing here is delivered), and must answer each request with its
 * own page or a 4xx, never a 500, and serve the next landing. The Koa shop once routed on `ctx.path`,
 * which throws on a target like `http://[/x` (Koa answered 500).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createShop as createExpressShop } from '@postback/example-express-shop';
import { createShop as createFastifyShop } from '@postback/example-fastify-shop';
import { createShop as createKoaShop } from '@postback/example-koa-shop';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostileRequests, sendRaw, unmet } from '../helpers/hostile-requests.ts';

const TOKEN = 'tok_fuzzValid0123456789AB';

describe.each([
  { name: 'koa-shop', createShop: createKoaShop },
  { name: 'express-shop', createShop: createExpressShop },
  { name: 'fastify-shop', createShop: createFastifyShop },
])('$name under hostile requests', ({ createShop }) => {
  let shop: Awaited<ReturnType<typeof createKoaShop>>;
  let dir: string;
  let port: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postback-example-fuzz-'));
    shop = await createShop({
      PORT: '0',
      HOST: '127.0.0.1',
      POSTBACK_API_URL: 'http://127.0.0.1:9',
      POSTBACK_API_KEY: 'example-fuzz-key',
      POSTBACK_SECRET: 'example-fuzz-cookie-secret-0123456789abcdef',
      POSTBACK_DB: join(dir, 'postback.db'),
      POSTBACK_WORKER: 'off',
    });
    port = Number(new URL(shop.url).port);
  });

  afterAll(async () => {
    await shop?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A landing after each hostile request: the page, with the click cookie. */
  const landsWell = async (): Promise<string> => {
    const response = await fetch(`${shop.url}/?click_token=${TOKEN}`, { redirect: 'manual' });
    await response.arrayBuffer();
    const cookie = response.headers.getSetCookie().some((c) => c.startsWith('postback_click='));
    return `status ${response.status}, cookie ${cookie}`;
  };

  for (const request of hostileRequests({ path: '/' })) {
    it(`${request.name}: the shop's answer or a 4xx, never a 500, and the next landing lands`, async () => {
      const problem = unmet(request, await sendRaw(port, request), 'app');
      expect({ problem, next: await landsWell() }).toEqual({
        problem: null,
        next: 'status 200, cookie true',
      });
    });
  }
});
