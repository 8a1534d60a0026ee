/** The capture engine on real Fetch `Request` objects: what it sets, what the app reads, what it ignores. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClickStamp, ClickStore } from '../click.ts';
import { OptionsError } from '../errors.ts';
import { DAY_MS } from '../policy.ts';
import { type CaptureOutcome, createClickCapture } from './engine.ts';
import { createMemoryClickStore } from './memory-click-store.ts';
import type { CaptureOptions, InvalidClickEvent } from './options.ts';

const SECRET = 'engine-secret-0123456789-abcdefghijklm';
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
const TOKEN_2 = 'tok_second_click_ABCDEFGHIJ';

function setup(extra: Partial<CaptureOptions<Request>> = {}) {
  let time = T0;
  const invalid: InvalidClickEvent[] = [];
  const errors: unknown[] = [];
  const capture = createClickCapture<Request>({
    secrets: [SECRET],
    now: () => time,
    onInvalid: (event) => invalid.push(event),
    onError: (error) => errors.push(error),
    ...extra,
  });
  const handle = async (url: string, cookie?: string, init: RequestInit = {}): Promise<CaptureOutcome> => {
    const headers = new Headers(init.headers);
    if (cookie !== undefined) headers.set('cookie', cookie);
    const request = new Request(`https://shop.test${url}`, { ...init, headers });
    return capture.handle(request, request);
  };
  return { capture, handle, invalid, errors, advance: (ms: number) => (time += ms), at: () => time };
}

/** The `name=value` pair of a Set-Cookie value, for sending it back. */
const pair = (setCookie: string | null): string => (setCookie ?? '').split(';')[0] as string;

describe('click capture engine', () => {
  it('answers a request with neither token nor cookie synchronously, setting nothing', async () => {
    const { capture } = setup();
    const request = new Request('https://shop.test/products?page=2', { headers: { cookie: 'session=abc' } });
    const outcome = capture.handle(request, request);
    expect(outcome).not.toBeInstanceOf(Promise);
    expect((outcome as CaptureOutcome).setCookie).toBeNull();
    expect((outcome as CaptureOutcome).redirect).toBeNull();
    expect(await (outcome as CaptureOutcome).postback.click()).toBeNull();
  });

  it('stamps a landing click with the capture time, sets a signed first-party cookie, and serves the click on the same request', async () => {
    const { handle } = setup();
    const outcome = await handle(`/landing?utm_source=ad&click_token=${TOKEN}`);
    expect(await outcome.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
    // The signed part (version, click time, MAC), a dot, then the token itself.
    expect(outcome.setCookie).toMatch(
      new RegExp(
        `^postback_click=[A-Za-z0-9_-]{52}\\.${TOKEN}; Max-Age=604800; Path=/; HttpOnly; Secure; SameSite=Lax$`,
      ),
    );
  });

  it('serves the click without a cookie when signing fails, synchronously or not, and reports the error', async () => {
    const broken = [
      () => () => {
        throw new Error('sign failed');
      },
      () => () => Promise.reject(new Error('sign failed')),
    ];
    for (const hmac of broken) {
      // The first call derives the cookie key: let it through, fail on the landing's own signing.
      let calls = 0;
      const { handle, errors } = setup({
        hmac: () => {
          const failing = hmac();
          return () => (calls++ === 0 ? new Uint8Array(32) : failing());
        },
      });
      const outcome = await handle(`/landing?click_token=${TOKEN}`);
      expect(outcome.setCookie).toBeNull();
      expect(await outcome.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
      expect(errors).toHaveLength(1);
    }
  });

  it('reads the click back from the cookie on later requests, with the original click time', async () => {
    const { handle, advance } = setup();
    const landing = await handle(`/?click_token=${TOKEN}`);
    advance(3 * DAY_MS);
    const later = await handle('/checkout', `theme=dark; ${pair(landing.setCookie)}`);
    expect(later.setCookie).toBeNull();
    expect(await later.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
  });

  it('verifies the cookie only when the app reads the click, once', async () => {
    const { handle, invalid } = setup();
    const landing = await handle(`/?click_token=${TOKEN}`);
    const tampered = pair(landing.setCookie).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const outcome = await handle('/', tampered);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(invalid).toEqual([]);
    const first = outcome.postback.click();
    expect(outcome.postback.click()).toBe(first);
    expect(await first).toBeNull();
    expect(invalid).toEqual([{ source: 'cookie', reason: 'signature' }]);
  });

  it('ignores an invalid token without failing, reports it, and sets no cookie', async () => {
    const { capture, invalid } = setup();
    const request = new Request('https://shop.test/?click_token=%7Bclick_token%7D');
    const outcome = capture.handle(request, request) as CaptureOutcome;
    expect(outcome.setCookie).toBeNull();
    expect(await outcome.postback.click()).toBeNull();
    expect(invalid).toEqual([
      { source: 'url', param: 'click_token', reason: 'characters', value: '{click_token}' },
    ]);
  });

  it('accepts a list of parameter names and takes the first listed that holds a valid token', async () => {
    const { handle, invalid } = setup({ param: ['ct', 'click_token'] });
    const outcome = await handle(`/?click_token=${TOKEN_2}&ct=bad`);
    expect(await outcome.postback.click()).toEqual({ token: TOKEN_2, clickedAt: T0 });
    expect(invalid).toMatchObject([{ source: 'url', param: 'ct', reason: 'too-short' }]);
  });

  it('lets a new click replace the kept one by default (last click wins)', async () => {
    const { handle, advance } = setup();
    const first = await handle(`/?click_token=${TOKEN}`);
    advance(60_000);
    const second = await handle(`/?click_token=${TOKEN_2}`, pair(first.setCookie));
    expect(await second.postback.click()).toEqual({ token: TOKEN_2, clickedAt: T0 + 60_000 });
    const later = await handle('/', pair(second.setCookie));
    expect(await later.postback.click()).toEqual({ token: TOKEN_2, clickedAt: T0 + 60_000 });
  });

  it.each([
    ['last-click attribution, no hook (the synchronous path)', {}],
    ['last-click attribution with consent', { consent: () => true }],
    ['first-click attribution', { attribution: 'first' as const }],
  ])(
    'keeps the first time of a token seen again, with %s, and does not re-issue its cookie',
    async (_name, extra) => {
      const { handle, advance, invalid } = setup(extra);
      const landing = await handle(`/landing?click_token=${TOKEN}`);
      advance(5 * DAY_MS);
      const again = await handle(`/landing?click_token=${TOKEN}`, `theme=dark; ${pair(landing.setCookie)}`);
      expect(await again.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
      expect(again.setCookie).toBeNull();
      expect(invalid).toEqual([]);
    },
  );

  it('redirects a landing opened again to the clean URL without re-issuing the cookie that keeps the click', async () => {
    const { handle, advance } = setup({ cleanUrl: true });
    const landing = await handle(`/p?click_token=${TOKEN}`);
    advance(DAY_MS);
    const again = await handle(`/p?click_token=${TOKEN}`, pair(landing.setCookie));
    expect(again.redirect).toEqual({ status: 302, location: '/p' });
    expect(again.setCookie).toBeNull();
  });

  it('stamps a token seen again anew when its cookie does not verify (tampered, or past the window)', async () => {
    const { handle, advance, at, invalid } = setup();
    const landing = pair((await handle(`/landing?click_token=${TOKEN}`)).setCookie);
    // One character of the MAC changed (position 40 of the value's 52 base64url characters).
    const at40 = 'postback_click='.length + 40;
    const tampered = `${landing.slice(0, at40)}${landing[at40] === 'A' ? 'B' : 'A'}${landing.slice(at40 + 1)}`;
    advance(DAY_MS);
    const forged = await handle(`/landing?click_token=${TOKEN}`, tampered);
    expect(await forged.postback.click()).toEqual({ token: TOKEN, clickedAt: at() });
    expect(forged.setCookie).not.toBeNull();
    expect(invalid).toEqual([{ source: 'cookie', reason: 'signature' }]);
    advance(7 * DAY_MS);
    const late = await handle(`/landing?click_token=${TOKEN}`, landing);
    expect(await late.postback.click()).toEqual({ token: TOKEN, clickedAt: at() });
  });

  it('keeps the first time a store holds for a token seen again on another device', async () => {
    const store = createMemoryClickStore();
    const { handle, advance } = setup({ store, key: () => 'cust_1' });
    await handle(`/landing?click_token=${TOKEN}`);
    advance(3 * DAY_MS);
    const elsewhere = await handle(`/landing?click_token=${TOKEN}`);
    expect(await elsewhere.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
    // The new device gets a cookie with the first time, and what is left of the window.
    expect(elsewhere.setCookie).toContain(`Max-Age=${4 * 86_400};`);
  });

  it('keeps a valid existing cookie with first-click attribution, and its remaining lifetime', async () => {
    const { handle, advance } = setup({ attribution: 'first' });
    const first = await handle(`/?click_token=${TOKEN}`);
    advance(DAY_MS);
    const second = await handle(`/?click_token=${TOKEN_2}`, pair(first.setCookie));
    expect(second.setCookie).toBeNull();
    expect(await second.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
    advance(7 * DAY_MS);
    const afterExpiry = await handle(`/?click_token=${TOKEN_2}`, pair(first.setCookie));
    expect(await afterExpiry.postback.click()).toEqual({ token: TOKEN_2, clickedAt: T0 + 8 * DAY_MS });
    expect(afterExpiry.setCookie).toContain('Max-Age=604800');
  });

  it('without consent keeps the click nowhere (no cookie, nothing in the store), and shows it to this request only', async () => {
    const store = createMemoryClickStore();
    const { handle } = setup({ consent: () => false, store, key: (req) => req.headers.get('x-customer') });
    const request = { headers: { 'x-customer': 'cust_7' } };
    const outcome = await handle(`/?click_token=${TOKEN}`, undefined, request);
    expect(outcome.setCookie).toBeNull();
    expect(await outcome.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
    expect(await outcome.postback.consent?.()).toBe(false);
    expect(await store.get('cust_7', T0)).toBeNull();
  });

  it('treats a consent hook that throws as no consent and reports the error', async () => {
    const { handle, errors } = setup({
      consent: () => {
        throw new Error('consent service down');
      },
    });
    const outcome = await handle(`/?click_token=${TOKEN}`);
    expect(outcome.setCookie).toBeNull();
    expect(await outcome.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
    expect(await outcome.postback.consent?.()).toBe(false);
    expect(errors).toMatchObject([{ message: 'consent service down' }]);
  });

  it('finds the click in the store on another device by the visitor key', async () => {
    const store = createMemoryClickStore();
    const { capture, advance } = setup({
      store,
      key: (req) => new URL(req.url).searchParams.get('customer'),
    });
    const phone = new Request(`https://shop.test/?customer=c1&click_token=${TOKEN}`);
    await capture.handle(phone, phone);
    advance(DAY_MS);
    const desktop = new Request('https://shop.test/checkout?customer=c1');
    expect(await (await capture.handle(desktop, desktop)).postback.click()).toEqual({
      token: TOKEN,
      clickedAt: T0,
    });
    const stranger = new Request('https://shop.test/checkout?customer=c2');
    expect(await (await capture.handle(stranger, stranger)).postback.click()).toBeNull();
  });

  it('picks between cookie and store click by attribution', async () => {
    for (const attribution of ['first', 'last'] as const) {
      const store = createMemoryClickStore();
      await store.put('c1', { token: TOKEN, clickedAt: T0 - DAY_MS });
      const { handle } = setup({ attribution, store, key: () => 'c1' });
      const cookieOnly = setup();
      const landing = await cookieOnly.handle(`/?click_token=${TOKEN_2}`);
      const click = await (await handle('/', pair(landing.setCookie))).postback.click();
      expect(click).toEqual(
        attribution === 'first'
          ? { token: TOKEN, clickedAt: T0 - DAY_MS }
          : { token: TOKEN_2, clickedAt: T0 },
      );
    }
  });

  it('carries on with the cookie when the store fails, reporting the failure', async () => {
    const broken: ClickStore = {
      ...createMemoryClickStore(),
      get: async () => {
        throw new Error('store offline');
      },
      put: async () => {
        throw new Error('store offline');
      },
    };
    const { handle, errors } = setup({ store: broken, key: () => 'c1' });
    const landing = await handle(`/?click_token=${TOKEN}`);
    expect(landing.setCookie).not.toBeNull();
    expect(await (await handle('/', pair(landing.setCookie))).postback.click()).toEqual({
      token: TOKEN,
      clickedAt: T0,
    });
    // The landing's read and write of the store, and the later request's read.
    expect(errors).toHaveLength(3);
  });

  it('redirects a landing GET to the same URL without the token, with the cookie, when cleanUrl is on', async () => {
    const { handle } = setup({ cleanUrl: true, cleanUrlStatus: 303 });
    const outcome = await handle(`/shoes?size=42&click_token=${TOKEN}&color=red#reviews`);
    expect(outcome.redirect).toEqual({
      status: 303,
      location: '/shoes?size=42&color=red#reviews',
    });
    expect(outcome.setCookie).toMatch(/^postback_click=/);
    const post = await handle(`/shoes?click_token=${TOKEN}`, undefined, { method: 'POST' });
    expect(post.redirect).toBeNull();
  });

  it('does not redirect when the click could not be kept (no consent, no store), so it serves this request', async () => {
    const { handle } = setup({ cleanUrl: true, consent: async () => false });
    const outcome = await handle(`/shoes?click_token=${TOKEN}`);
    expect(outcome.redirect).toBeNull();
    expect(await outcome.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
  });

  it('writes Domain and leaves out Secure when configured for plain-http development', async () => {
    const { handle } = setup({ secure: false, cookieDomain: 'shop.test', cookieName: '__pb' });
    const outcome = await handle(`/?click_token=${TOKEN}`);
    expect(outcome.setCookie).toMatch(
      /^__pb=[^;]+; Max-Age=604800; Path=\/; Domain=shop\.test; HttpOnly; SameSite=Lax$/,
    );
  });

  it('survives hooks that throw', async () => {
    const { handle } = setup({
      onInvalid: () => {
        throw new Error('hook bug');
      },
      onError: () => {
        throw new Error('hook bug');
      },
      key: () => {
        throw new Error('key bug');
      },
      store: createMemoryClickStore(),
    });
    expect(await (await handle('/?click_token=bad')).postback.click()).toBeNull();
    expect(await (await handle(`/?click_token=${TOKEN}`)).postback.click()).toEqual({
      token: TOKEN,
      clickedAt: T0,
    });
  });

  it('never throws or rejects, whatever the URL and cookie header', async () => {
    const { capture } = setup({ store: createMemoryClickStore(), key: () => 'k', cleanUrl: true });
    const fragment = fc.oneof(
      fc.string(),
      fc.constantFrom('click_token=', 'postback_click=', TOKEN, '%', '%zz', '&', '=', ';', '?', '#', 'AAAA'),
    );
    const text = fc.array(fragment, { maxLength: 8 }).map((parts) => parts.join(''));
    await fc.assert(
      fc.asyncProperty(text, text, fc.constantFrom('GET', 'POST', 'HEAD'), async (url, cookie, method) => {
        const request = { url, method, headers: { cookie } };
        const outcome = await capture.handle(request, request as unknown as Request);
        const click: ClickStamp | null = await outcome.postback.click();
        expect(click === null || typeof click.token === 'string').toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('capture options', () => {
  it('names the option at fault and never echoes a secret', () => {
    const short = 'too-short-secret';
    try {
      createClickCapture({ secrets: [SECRET, short] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as OptionsError).field).toBe('secrets');
      expect(String(error)).not.toContain(short);
    }
  });

  it('refuses unknown options, a store without a key, and malformed names', () => {
    const field = (options: unknown): string | undefined => {
      try {
        createClickCapture(options as CaptureOptions);
      } catch (error) {
        return error instanceof OptionsError ? error.field : 'not an OptionsError';
      }
      return undefined;
    };
    expect(field({ secrets: [SECRET], sameSite: 'None' })).toBe('sameSite');
    expect(field({ secrets: [SECRET], store: createMemoryClickStore() })).toBe('key');
    expect(field({ secrets: [SECRET], param: 'click token' })).toBe('param');
    expect(field({ secrets: [SECRET], cookieName: 'a;b' })).toBe('cookieName');
    expect(field({ secrets: [SECRET], cookieDomain: 'shop.test; Secure' })).toBe('cookieDomain');
    expect(field({ secrets: [SECRET], tokenMinLength: 50, tokenMaxLength: 40 })).toBe('tokenMinLength');
    expect(field({})).toBe('secrets');
    expect(field({ secrets: [SECRET] })).toBeUndefined();
  });

  it('keeps secrets out of the capture object and its settings', () => {
    const { capture } = setup();
    expect(JSON.stringify(capture)).not.toContain(SECRET);
    expect(Object.keys(capture.settings)).not.toContain('secrets');
  });
});
