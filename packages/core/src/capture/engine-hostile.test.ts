/**
 * The capture engine under requests made by hand: many values of the token parameter or many click
 * cookies, lone surrogates and odd URLs from an app's own request objects. It never throws, serves the
 * request without a click, and what it reports is bounded and well-formed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CaptureOutcome, createClickCapture } from './engine.ts';
import type { CaptureRequest, InvalidClickEvent } from './options.ts';

const SECRET = 'engine-secret-0123456789-abcdefghijklm';
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';

function setup() {
  const invalid: InvalidClickEvent[] = [];
  let hmacs = 0;
  const capture = createClickCapture<CaptureRequest>({
    secrets: [SECRET],
    onInvalid: (event) => invalid.push(event),
    // Counts the MACs a request costs (a forged cookie is verified with one).
    hmac: () => (data) => {
      hmacs++;
      return new Uint8Array(32).fill(data.length);
    },
  });
  const handle = async (url: string, cookie: string | null = null) => {
    const request: CaptureRequest = { url, method: 'GET', headers: {}, cookie };
    const outcome: CaptureOutcome = await capture.handle(request, request);
    return { outcome, click: await outcome.postback.click() };
  };
  return { handle, invalid, hmacs: () => hmacs };
}

describe('click capture engine under hand-made requests', () => {
  it('looks at no more than 4 values of the token parameter, so reports stay few', async () => {
    const { handle, invalid } = setup();
    const junk = Array.from({ length: 1_000 }, () => 'click_token=x').join('&');
    const { outcome, click } = await handle(`/?${junk}&click_token=${TOKEN}`);
    expect({ click, setCookie: outcome.setCookie }).toEqual({ click: null, setCookie: null });
    expect(invalid).toHaveLength(4);
    // A landing URL holds one token: a valid one among the first values is still taken.
    const again = setup();
    expect((await again.handle(`/?click_token=a&click_token=b&click_token=${TOKEN}`)).click?.token).toBe(
      TOKEN,
    );
  });

  it('verifies no more than 4 click cookies of a request, so a header of forged ones costs 4 MACs', async () => {
    const { handle, invalid, hmacs } = setup();
    const before = hmacs();
    const forged = `postback_click=${'A'.repeat(52)}.${TOKEN}`;
    const { click } = await handle('/', Array.from({ length: 200 }, () => forged).join('; '));
    expect(click).toBeNull();
    expect(invalid).toEqual(Array.from({ length: 4 }, () => ({ source: 'cookie', reason: 'version' })));
    expect(hmacs() - before).toBe(0); // the version byte is checked before any MAC
    const signed = `postback_click=${'Ag'.padEnd(52, 'A')}.${TOKEN}`;
    await handle('/', Array.from({ length: 200 }, () => signed).join('; '));
    expect(hmacs() - before).toBe(4);
  });

  it('refuses a token holding a lone surrogate (an app’s own request URL) and reports it well-formed', async () => {
    const { handle, invalid } = setup();
    const { click } = await handle(`/?click_token=${TOKEN}\ud800`);
    expect(click).toBeNull();
    expect(invalid).toEqual([
      { source: 'url', param: 'click_token', reason: 'characters', value: `${TOKEN}\ufffd` },
    ]);
  });

  it('reports a long value cut without splitting a surrogate pair', async () => {
    const { handle, invalid } = setup();
    await handle(`/?click_token=x${'%F0%9F%98%80'.repeat(300)}`);
    const [event] = invalid;
    expect(event?.source === 'url' && event.value).toBe(`x${'\u{1F600}'.repeat(127)}`);
  });

  it('never throws, and reports only well-formed values, whatever the URL and cookie hold', async () => {
    const { handle, invalid } = setup();
    const unit = fc.oneof(
      fc.constantFrom('click_token=', '&', '%', '%ZZ', '%ED%A0%80', '+', '#', '?', '//[', TOKEN),
      fc.string({ unit: 'binary', maxLength: 4 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(unit, { maxLength: 12 }),
        fc.option(fc.string({ unit: 'binary' })),
        async (parts, cookie) => {
          await handle(parts.join(''), cookie);
          for (const event of invalid)
            if (event.source === 'url') expect(event.value.isWellFormed()).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});
