/** `withPostback`: click capture around a Fetch API handler (Hono, Bun, Deno, Workers). */
import { describe, expect, it } from 'vitest';
import { withPostback } from './fetch.ts';

const SECRET = 'fetch-secret-0123456789-abcdefghijklmn';
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('withPostback', () => {
  it('hands the click of a landing request to the handler and sets the cookie on its response', async () => {
    const app = withPostback(async (_request, postback) => Response.json({ click: await postback.click() }), {
      secrets: [SECRET],
      now: () => T0,
    });
    const response = await app(new Request(`https://shop.test/?click_token=${TOKEN}`));
    expect(await response.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    const cookie = response.headers.get('set-cookie') as string;
    expect(cookie).toMatch(/^postback_click=[^;]+; Max-Age=604800; Path=\/; HttpOnly; Secure; SameSite=Lax$/);

    const later = await app(
      new Request('https://shop.test/checkout', { headers: { cookie: cookie.split(';')[0] as string } }),
    );
    expect(await later.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    expect(later.headers.get('set-cookie')).toBeNull();
  });

  it('passes the platform arguments (env, ctx) through after the click', async () => {
    const app = withPostback(
      (_request, _postback, env: { name: string }, ctx: { id: number }) =>
        new Response(`${env.name}:${ctx.id}`),
      { secrets: [SECRET] },
    );
    expect(await (await app(new Request('https://shop.test/'), { name: 'prod' }, { id: 7 })).text()).toBe(
      'prod:7',
    );
  });

  it('sets the cookie even on a response whose headers are immutable', async () => {
    const app = withPostback(() => Response.redirect('https://shop.test/elsewhere', 302), {
      secrets: [SECRET],
    });
    const response = await app(new Request(`https://shop.test/?click_token=${TOKEN}`));
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://shop.test/elsewhere');
    expect(response.headers.get('set-cookie')).toMatch(/^postback_click=/);
  });

  it('answers a landing with the clean-URL redirect without calling the handler', async () => {
    let called = false;
    const app = withPostback(
      () => {
        called = true;
        return new Response('page');
      },
      { secrets: [SECRET], cleanUrl: true },
    );
    const response = await app(new Request(`https://shop.test/shoes?click_token=${TOKEN}&size=42`));
    expect(called).toBe(false);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/shoes?size=42');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('set-cookie')).toMatch(/^postback_click=/);
  });

  it('redirects only to a path on the origin the browser asked, whatever the request URL or Host', async () => {
    const app = withPostback(() => new Response('page'), { secrets: [SECRET], cleanUrl: true });
    for (const url of [
      `https://shop.test//evil.example/?click_token=${TOKEN}`,
      `https://shop.test/\\evil.example/?click_token=${TOKEN}`,
      `https://shop.test///evil.example/x?click_token=${TOKEN}`,
      // A server that builds Request.url from the Host header, or from `//evil.example/` against its base.
      `http://evil.example/x?click_token=${TOKEN}`,
    ]) {
      const location = (await app(new Request(url))).headers.get('location') as string;
      expect(location).toMatch(/^\/(?![/\\])/);
      expect(new URL(location, 'https://shop.test').origin).toBe('https://shop.test');
    }
  });
});
