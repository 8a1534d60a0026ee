/**
 * The Next.js adapter with real `NextRequest`/`NextResponse` objects and real signed cookies: what the
 * proxy answers, what the same request's handlers then see (rebuilt from the proxy's request-header
 * override exactly as Next's server applies it), and what later requests carrying the cookie see.
 */
import {
  createClickCookieCodec,
  createMemoryClickStore,
  createMemoryOutbox,
  DEFAULT_CONFIRM_WINDOW_MS,
  type InvalidClickEvent,
  OptionsError,
} from '@postback/core';
import fc from 'fast-check';
import { NextRequest, type NextResponse } from 'next/server.js';
import { describe, expect, it } from 'vitest';
import { signedValueOf } from './forwarded-click.ts';
import { createPostback, createPostbackProxy, POSTBACK_CLICK_HEADER } from './index.ts';

const SECRET = 'next-secret-0123456789-abcdefghijklmn';
const OTHER_SECRET = 'someone-elses-secret-0123456789-abcdef';
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const SHOP = 'https://shop.example';

function setup(extra: Partial<Parameters<typeof createPostback>[0]> = {}) {
  let time = T0;
  const invalid: InvalidClickEvent[] = [];
  const postback = createPostback({
    secrets: [SECRET],
    now: () => time,
    onInvalid: (event) => invalid.push(event),
    ...extra,
  });
  return { postback, invalid, advance: (ms: number) => (time += ms) };
}

const request = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
  new NextRequest(new URL(path, SHOP), { method, headers });

/** The request the app's handlers receive after the proxy: Next applies `x-middleware-override-headers`. */
function downstream(original: NextRequest, response: NextResponse): Request {
  const override = response.headers.get('x-middleware-override-headers');
  if (override === null) return new Request(original.url, { headers: original.headers });
  const headers = new Headers();
  for (const name of override.split(',').filter(Boolean)) {
    const value = response.headers.get(`x-middleware-request-${name}`);
    if (value !== null) headers.set(name, value);
  }
  return new Request(original.url, { headers });
}

const cookieValueOf = (response: Response): string => {
  const setCookie = response.headers.get('set-cookie') ?? '';
  return /^postback_click=([^;]+)/.exec(setCookie)?.[1] ?? '';
};

const signedBy = (secret: string, clickedAt: number) =>
  createClickCookieCodec({
    secrets: [secret],
    confirmWindowMs: DEFAULT_CONFIRM_WINDOW_MS,
    tokenMinLength: 16,
    tokenMaxLength: 256,
  }).encode({ token: TOKEN, clickedAt });

describe('the proxy on a landing', () => {
  it('sets the signed first-party cookie and lets the request go on to the app', async () => {
    const { postback } = setup();
    const response = await postback.proxy(request(`/p/shoe?click_token=${TOKEN}`));
    expect(response.headers.get('x-middleware-next')).toBe('1');
    const setCookie = response.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(
      /^postback_click=[A-Za-z0-9_-]{52}\.[A-Za-z0-9._~-]+; Max-Age=604800; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
  });

  it('gives the click to the handlers of that very request, through the forwarded header', async () => {
    const { postback } = setup();
    const landing = request(`/p/shoe?click_token=${TOKEN}`);
    const response = await postback.proxy(landing);
    const handled = downstream(landing, response);
    expect(handled.headers.get(POSTBACK_CLICK_HEADER)).toBe(cookieValueOf(response));
    expect(await postback.getClickFromRequest(handled)).toEqual({ token: TOKEN, clickedAt: T0 });
  });

  it('answers with a clean-URL redirect carrying the cookie when cleanUrl is on', async () => {
    const { postback } = setup({ cleanUrl: true });
    const response = await postback.proxy(request(`/p/shoe?utm_source=ad&click_token=${TOKEN}`));
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`${SHOP}/p/shoe?utm_source=ad`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(cookieValueOf(response)).not.toBe('');
  });

  it('with cleanUrl, redirects only to the shop’s own origin, whatever the request path', async () => {
    const { postback } = setup({ cleanUrl: true });
    for (const path of [
      `//evil.example/?click_token=${TOKEN}`,
      `/\\evil.example/?click_token=${TOKEN}`,
      `///evil.example/x?click_token=${TOKEN}`,
    ]) {
      // The URL as the server receives it: the path is not resolved against the shop as a reference.
      const response = await postback.proxy(new NextRequest(`${SHOP}${path}`));
      expect(response.status).toBe(302);
      expect(new URL(response.headers.get('location') as string).origin).toBe(SHOP);
    }
  });
});

describe('later requests', () => {
  it('keep the first time of a landing URL opened again with the same token', async () => {
    const { postback, advance } = setup();
    const first = await postback.proxy(request(`/p/shoe?click_token=${TOKEN}`));
    advance(5 * 24 * 3_600_000);
    const reopened = request(`/p/shoe?click_token=${TOKEN}`, {
      cookie: `postback_click=${cookieValueOf(first)}`,
    });
    const response = await postback.proxy(reopened);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await postback.getClickFromRequest(downstream(reopened, response))).toEqual({
      token: TOKEN,
      clickedAt: T0,
    });
  });

  it('yield the click from the cookie set on the landing, with its original time', async () => {
    const { postback, advance } = setup();
    const value = cookieValueOf(await postback.proxy(request(`/?click_token=${TOKEN}`)));
    advance(3 * 24 * 3600_000);
    const later = request('/orders', { cookie: `theme=dark; postback_click=${value}` }, 'POST');
    const response = await postback.proxy(later);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await postback.getClickFromRequest(downstream(later, response))).toEqual({
      token: TOKEN,
      clickedAt: T0,
    });
  });

  it('yield no click once the window has passed', async () => {
    const { postback, advance, invalid } = setup();
    const value = cookieValueOf(await postback.proxy(request(`/?click_token=${TOKEN}`)));
    advance(DEFAULT_CONFIRM_WINDOW_MS + 1);
    expect(
      await postback.getClickFromRequest(request('/', { cookie: `postback_click=${value}` })),
    ).toBeNull();
    expect(invalid).toEqual([{ source: 'cookie', reason: 'expired' }]);
  });

  it('ignore a tampered cookie', async () => {
    const { postback, invalid } = setup();
    const value = cookieValueOf(await postback.proxy(request(`/?click_token=${TOKEN}`)));
    const flipped = `${value.slice(0, 20)}${value[20] === 'A' ? 'B' : 'A'}${value.slice(21)}`;
    expect(
      await postback.getClickFromRequest(request('/', { cookie: `postback_click=${flipped}` })),
    ).toBeNull();
    expect(invalid).toEqual([{ source: 'cookie', reason: 'signature' }]);
  });

  it('ignore a cookie signed with another secret', async () => {
    const { postback } = setup();
    const forged = await signedBy(OTHER_SECRET, T0);
    expect(
      await postback.getClickFromRequest(request('/', { cookie: `postback_click=${forged}` })),
    ).toBeNull();
  });
});

describe('requests without a token', () => {
  it('pass through untouched: no Set-Cookie, no request-header override', () => {
    const { postback } = setup();
    const response = postback.proxy(request('/p/shoe?utm_source=newsletter', { cookie: 'theme=dark' }));
    expect(response).not.toBeInstanceOf(Promise);
    const done = response as NextResponse;
    expect(done.headers.get('x-middleware-next')).toBe('1');
    expect(done.headers.get('set-cookie')).toBeNull();
    expect(done.headers.get('x-middleware-override-headers')).toBeNull();
  });

  it('ignore an invalid token (no cookie is set for junk)', async () => {
    const { postback, invalid } = setup();
    const response = await postback.proxy(request('/?click_token={click_token}'));
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(invalid.map((event) => event.source)).toEqual(['url']);
  });
});

describe('a forwarded header sent by the client', () => {
  it('is removed by the proxy before the handlers see it', async () => {
    const { postback } = setup();
    const forged = await signedBy(OTHER_SECRET, T0);
    const incoming = request('/orders', { [POSTBACK_CLICK_HEADER]: forged }, 'POST');
    const handled = downstream(incoming, await postback.proxy(incoming));
    expect(handled.headers.has(POSTBACK_CLICK_HEADER)).toBe(false);
    expect(await postback.getClickFromRequest(handled)).toBeNull();
  });

  it('is replaced by the proxy with the landing click, not appended to', async () => {
    const { postback } = setup();
    const forged = await signedBy(OTHER_SECRET, T0 - 1000);
    const landing = request(`/?click_token=${TOKEN}`, { [POSTBACK_CLICK_HEADER]: forged });
    const response = await postback.proxy(landing);
    expect(downstream(landing, response).headers.get(POSTBACK_CLICK_HEADER)).toBe(cookieValueOf(response));
  });

  it('reaching a handler the proxy does not cover is verified like a cookie and rejected when forged', async () => {
    const { postback, invalid } = setup();
    const forged = await signedBy(OTHER_SECRET, T0);
    expect(await postback.getClickFromRequest(request('/', { [POSTBACK_CLICK_HEADER]: forged }))).toBeNull();
    expect(invalid).toEqual([{ source: 'cookie', reason: 'signature' }]);
    const smuggled = `x; postback_click=${await signedBy(SECRET, T0)}`;
    expect(
      await postback.getClickFromRequest(request('/', { [POSTBACK_CLICK_HEADER]: smuggled })),
    ).toBeNull();
  });
});

describe('Pages Router API routes', () => {
  it('read the click from a Node-style req with the cookie or the forwarded header', async () => {
    const { postback } = setup();
    const value = await signedBy(SECRET, T0 - 60_000);
    const viaCookie = {
      url: '/api/orders',
      method: 'POST',
      headers: { cookie: `a=1; postback_click=${value}` },
    };
    const viaHeader = { url: '/api/orders', method: 'POST', headers: { [POSTBACK_CLICK_HEADER]: value } };
    const none = { url: '/api/orders', method: 'POST', headers: { cookie: 'a=1' } };
    const expected = { token: TOKEN, clickedAt: T0 - 60_000 };
    expect(await postback.getClickFromApiRequest(viaCookie)).toEqual(expected);
    expect(await postback.getClickFromApiRequest(viaHeader)).toEqual(expected);
    expect(await postback.getClickFromApiRequest(none)).toBeNull();
  });

  it('read the click whatever the req.url a client sent (one no URL parser takes included)', async () => {
    const { postback } = setup();
    const cookie = `postback_click=${await signedBy(SECRET, T0 - 60_000)}`;
    for (const url of ['//[', 'http://[/x', '//:99999/api', '/api/%ZZ', undefined]) {
      const req = { url, method: 'POST', headers: { cookie } };
      expect({ url, click: await postback.getClickFromApiRequest(req) }).toEqual({
        url,
        click: { token: TOKEN, clickedAt: T0 - 60_000 },
      });
    }
  });
});

describe('confirmOrder', () => {
  it('enqueues the confirmation with the click when the request has one, and nothing otherwise', async () => {
    const { postback } = setup();
    const outbox = createMemoryOutbox({ now: () => T0 });
    const landing = request(`/?click_token=${TOKEN}`);
    const cookie = `postback_click=${cookieValueOf(await postback.proxy(landing))}`;
    const withClick = await postback.confirmOrder(request('/orders', { cookie }, 'POST'), outbox, {
      orderId: 'ord_1',
      valueMicros: 12_340_000,
    });
    expect(withClick.enqueued).toBe(true);
    const without = await postback.confirmOrder(request('/orders', {}, 'POST'), outbox, {
      orderId: 'ord_2',
      valueMicros: 1_000_000,
    });
    expect(without).toEqual({ enqueued: false, click: null, reason: 'no-click' });
    const apiReq = { url: '/api/orders', headers: { cookie } };
    const again = await postback.confirmOrder(apiReq, outbox, { orderId: 'ord_1', valueMicros: 12_340_000 });
    expect(again.enqueued && again.result.created).toBe(false);
  });

  it("without a request and outside a Next request scope, fails with Next's own error rather than reading no click", async () => {
    const { postback } = setup();
    const outbox = createMemoryOutbox({ now: () => T0 });
    await expect(postback.confirmOrder(undefined, outbox, { orderId: 'o', valueMicros: 1 })).rejects.toThrow(
      /outside a request scope/,
    );
  });
});

describe('options', () => {
  it('are validated at once with an OptionsError naming the option, never echoing a secret', () => {
    expect(() => createPostbackProxy({ secrets: ['short'] })).toThrow(OptionsError);
    try {
      createPostback({ secrets: [SECRET], cookiName: 'x' } as never);
      expect.unreachable();
    } catch (error) {
      expect((error as OptionsError).field).toBe('cookiName');
      expect(String(error)).not.toContain(SECRET);
    }
  });

  it('given as a function, are read on first use, once, and a synchronous landing stays synchronous', async () => {
    let reads = 0;
    const postback = createPostback(() => {
      reads += 1;
      return { secrets: [SECRET], now: () => T0 };
    });
    expect(reads).toBe(0);
    const response = postback.proxy(request(`/?click_token=${TOKEN}`));
    expect(response).not.toBeInstanceOf(Promise);
    const value = cookieValueOf(await response);
    expect(await postback.getClickFromRequest(request('/', { cookie: `postback_click=${value}` }))).toEqual({
      token: TOKEN,
      clickedAt: T0,
    });
    expect(reads).toBe(1);
  });

  it('given as a function, report invalid ones on every use until they are valid', async () => {
    let secret = 'short';
    const proxy = createPostbackProxy(() => ({ secrets: [secret] }));
    expect(() => proxy(request('/'))).toThrow(OptionsError);
    expect(() => proxy(request('/'))).toThrow(OptionsError);
    secret = SECRET;
    expect((await proxy(request('/'))).headers.get('x-middleware-next')).toBe('1');
  });

  it('honour a custom cookie name on both the proxy and the readers', async () => {
    const { postback } = setup({ cookieName: '__Host-click' });
    const response = await postback.proxy(request(`/?click_token=${TOKEN}`));
    const value = /^__Host-click=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1];
    expect(value).toBeDefined();
    expect(await postback.getClickFromRequest(request('/', { cookie: `__Host-click=${value}` }))).toEqual({
      token: TOKEN,
      clickedAt: T0,
    });
  });
});

describe('consent and the store', () => {
  it('without consent, sets no cookie, forwards nothing, puts nothing in the store and confirms no order', async () => {
    const store = createMemoryClickStore();
    const { postback } = setup({
      consent: (request) => request.headers.get('x-consent') === 'yes',
      store,
      key: (request) => request.headers.get('x-visitor'),
    });
    const landing = request(`/?click_token=${TOKEN}`, { 'x-visitor': 'v_1' });
    const response = await postback.proxy(landing);
    expect(response.headers.get('set-cookie')).toBeNull();
    const handled = downstream(landing, response);
    expect(handled.headers.has(POSTBACK_CLICK_HEADER)).toBe(false);
    expect(await store.get('v_1', T0)).toBeNull();
    const outbox = createMemoryOutbox({ now: () => T0 });
    const order = { orderId: 'ord_nc', valueMicros: 1_000_000 };
    expect(await postback.confirmOrder(handled, outbox, order)).toEqual({
      enqueued: false,
      click: null,
      reason: 'no-consent',
    });
    // A cookie set while consent was given confirms nothing once the request refuses it.
    const granted = request(`/?click_token=${TOKEN}`, { 'x-consent': 'yes' });
    const cookie = `postback_click=${cookieValueOf(await postback.proxy(granted))}`;
    const refused = request('/orders', { cookie }, 'POST');
    expect(await postback.confirmOrder(refused, outbox, order)).toMatchObject({ reason: 'no-consent' });
    expect(await outbox.listJobs()).toEqual([]);
  });
});

describe('the forwarded header, for any value', () => {
  it('never yields a click or throws unless it is a value we signed', async () => {
    const { postback } = setup({ onInvalid: undefined });
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary-ascii', maxLength: 200 }), async (value) => {
        let headers: Record<string, string>;
        try {
          headers = { [POSTBACK_CLICK_HEADER]: new Headers({ v: value }).get('v') ?? '' };
        } catch {
          return; // not a value an HTTP header can hold
        }
        expect(await postback.getClickFromRequest(request('/', headers))).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('is the exact value of the Set-Cookie the proxy made, whatever its attributes', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9._~-]{1,120}$/),
        fc.constantFrom('', '; Max-Age=1; Path=/', '; HttpOnly; Secure; SameSite=Lax'),
        (value, attributes) => {
          expect(signedValueOf(`postback_click=${value}${attributes}`)).toBe(value);
        },
      ),
    );
  });
});
