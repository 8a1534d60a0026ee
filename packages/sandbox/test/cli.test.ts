/**
 * `postback sandbox`, run in-process through the CLI's `main` with a fake io: it prints its URL, serves
 * until the io's signal aborts, then closes; bad flags are usage errors (exit 2).
 */
import { type CommandIo, main } from '@postback/cli';
import { describe, expect, test } from 'vitest';

function fakeIo() {
  let out = '';
  let err = '';
  const controller = new AbortController();
  const io: CommandIo = {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    env: {},
    isTTY: false,
    signal: controller.signal,
  };
  return { io, controller, out: () => out, err: () => err };
}

async function waitFor<T>(read: () => T | undefined, ms = 5_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('postback sandbox', () => {
  test('prints its URL, serves the API with the given options, and stops with exit 0 on the signal', async () => {
    const { io, controller, out } = fakeIo();
    const exit = main(['sandbox', '--port', '0', '--click-param', 'pbclid', '--return-window-days', '3'], io);
    const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(out())?.[1]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const account = (await (
      await fetch(`${url}/_sandbox/accounts`, { method: 'POST', body: '{}' })
    ).json()) as {
      keys: { all: string };
    };
    const created = await fetch(`${url}/v1/campaigns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.keys.all}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'cli',
        pricing_model: 'cpc',
        bid_micros: 1,
        total_budget_micros: 1,
        creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://shop.example/' }],
      }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const click = (await (
      await fetch(`${url}/_sandbox/clicks`, { method: 'POST', body: JSON.stringify({ campaign_id: id }) })
    ).json()) as { click_token: string; landing_url: string };
    // --click-param reached the sandbox.
    expect(new URL(click.landing_url).searchParams.get('pbclid')).toBe(click.click_token);
    controller.abort();
    expect(await exit).toBe(0);
    await expect(fetch(`${url}/_sandbox/clock`)).rejects.toThrow();
  });

  test('--rate-limit N limits each key to N /v1 requests per second', async () => {
    const { io, controller, out } = fakeIo();
    const exit = main(['sandbox', '--port', '0', '--rate-limit', '2'], io);
    const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(out())?.[1]);
    expect(out()).toContain('rate limit: 2 requests per second per API key');
    const { keys } = (await (
      await fetch(`${url}/_sandbox/accounts`, { method: 'POST', body: '{}' })
    ).json()) as {
      keys: { read: string };
    };
    // The flag reached the sandbox's faults (the window itself is tested with an injected clock).
    const faults = (await (await fetch(`${url}/_sandbox/faults`)).json()) as { rate_limit_per_s: number };
    expect(faults.rate_limit_per_s).toBe(2);
    let limited: Response | undefined;
    for (let i = 0; i < 50 && limited === undefined; i++) {
      const res = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${keys.read}` } });
      if (res.status === 429) limited = res;
      else expect(res.status).toBe(200);
    }
    expect(limited?.headers.get('retry-after')).toBe('1');
    controller.abort();
    expect(await exit).toBe(0);
  });

  test.each([
    [['--port', 'abc'], '--port'],
    [['--port', '70000'], '--port'],
    [['--bogus'], "'--bogus'"],
    [['--click-param', 'has space'], '--click-param'],
    [['--return-window-days', '0'], '--return-window-days'],
    [['--rate-limit', '0'], '--rate-limit'],
    [['--rate-limit', 'fast'], '--rate-limit'],
    [['stray'], 'stray'],
  ])('%j is a usage error (exit 2) naming %s', async (args, named) => {
    const { io, err } = fakeIo();
    expect(await main(['sandbox', ...args], io)).toBe(2);
    expect(err()).toContain(named);
  });

  test('--help prints the options and exits 0', async () => {
    const { io, out } = fakeIo();
    expect(await main(['sandbox', '--help'], io)).toBe(0);
    expect(out()).toContain('--return-window-days');
  });

  test('a port in use exits 1 with the reason', async () => {
    const first = fakeIo();
    const running = main(['sandbox', '--port', '0'], first.io);
    const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(first.out())?.[1]);
    const { io, err } = fakeIo();
    expect(await main(['sandbox', '--port', new URL(url).port], io)).toBe(1);
    expect(err()).toContain('EADDRINUSE');
    first.controller.abort();
    expect(await running).toBe(0);
  });
});
