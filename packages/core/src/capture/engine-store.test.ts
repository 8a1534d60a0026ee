/**
 * What a `ClickStore` returns is checked before capture uses it: a user-supplied store handing back a
 * token with CR/LF (or any value a landing URL could not carry, or an impossible time) is no click, is
 * reported through `onInvalid` as `source: 'store'`, and never reaches `Set-Cookie` or the shopper's page.
 */
import { describe, expect, it } from 'vitest';
import type { ClickStamp, ClickStore } from '../click.ts';
import { DAY_MS } from '../policy.ts';
import { createClickCapture } from './engine.ts';
import type { InvalidClickEvent } from './options.ts';

const SECRET = 'engine-secret-0123456789-abcdefghijklm';
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';

/** A store that returns `kept` for every key, as a buggy or hostile user store might. */
function storeReturning(kept: unknown): ClickStore {
  return {
    put: async () => {},
    get: async () => kept as ClickStamp,
    delete: async () => {},
    sweep: async () => 0,
    close: async () => {},
  };
}

function setup(kept: unknown, attribution: 'first' | 'last' = 'first') {
  const invalid: InvalidClickEvent[] = [];
  const errors: unknown[] = [];
  const capture = createClickCapture<Request>({
    secrets: [SECRET],
    now: () => T0,
    attribution,
    store: storeReturning(kept),
    key: () => 'cust_1',
    onInvalid: (event) => invalid.push(event),
    onError: (error) => errors.push(error),
  });
  const handle = async (url: string) => {
    const request = new Request(`https://shop.test${url}`);
    const outcome = await capture.handle(request, request);
    return { outcome, click: await outcome.postback.click() };
  };
  return { handle, invalid, errors };
}

describe('clicks returned by a ClickStore', () => {
  it('never puts a stored token holding CR/LF into Set-Cookie: the landing’s own click is kept instead', async () => {
    const hostile = { token: `tok_aaaaaaaaaaaaaaaa\r\nSet-Cookie: admin=1`, clickedAt: T0 - DAY_MS };
    const { handle, invalid, errors } = setup(hostile);
    // 'first' attribution: an older stored click would win the landing and be written into the cookie.
    const { outcome, click } = await handle(`/landing?click_token=${TOKEN}`);
    expect(click).toEqual({ token: TOKEN, clickedAt: T0 });
    expect(outcome.setCookie).not.toMatch(/[\r\n]/);
    expect(outcome.setCookie).toContain(`.${TOKEN};`);
    expect(invalid).toEqual([{ source: 'store', reason: 'characters' }]);
    expect(errors).toEqual([]);
  });

  it('treats an invalid stored click as no click on a later request, and reports why', async () => {
    const cases: [unknown, string][] = [
      [{ token: 'a\r\nb'.padEnd(20, 'x'), clickedAt: T0 }, 'characters'],
      [{ token: 'short', clickedAt: T0 }, 'too-short'],
      [{ token: TOKEN, clickedAt: 'yesterday' }, 'malformed'],
      [{ token: 42, clickedAt: T0 }, 'malformed'],
      ['tok_not_an_object_at_all', 'malformed'],
      [{ token: TOKEN, clickedAt: T0 + DAY_MS }, 'future'],
      [{ token: TOKEN, clickedAt: T0 - 8 * DAY_MS }, 'expired'],
    ];
    for (const [kept, reason] of cases) {
      const { handle, invalid } = setup(kept, 'last');
      const { outcome, click } = await handle('/checkout');
      expect({ click, setCookie: outcome.setCookie }).toEqual({ click: null, setCookie: null });
      expect(invalid).toEqual([{ source: 'store', reason }]);
    }
  });

  it('uses a valid stored click as it was, copied', async () => {
    const kept = { token: TOKEN, clickedAt: T0 - DAY_MS, extra: 'ignored' };
    const { handle, invalid } = setup(kept, 'last');
    expect((await handle('/checkout')).click).toEqual({ token: TOKEN, clickedAt: T0 - DAY_MS });
    expect(invalid).toEqual([]);
  });
});
