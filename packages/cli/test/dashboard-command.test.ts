/**
 * `postback dashboard`: serves the dashboard over a SQLite outbox on 127.0.0.1, read-only unless
 * `--token-env` names a variable holding the token; the token never comes from a flag value. Real HTTP
 * on an ephemeral port, in process through `main(args, io)`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture, seedDead } from './db-fixture.ts';

const TOKEN = 'cli-dashboard-token-0123456789';
let db: DbFixture;

afterEach(() => db?.cleanup());

async function seeded(): Promise<DbFixture> {
  db = dbFixture();
  const outbox = db.open();
  await seedDead(outbox, ['ord-1', 'ord-2'], 'click_token not found');
  await outbox.close();
  return db;
}

async function waitForUrl(out: () => string): Promise<string> {
  const until = Date.now() + 10_000;
  for (;;) {
    const url = /dashboard on (http:\/\/\S+\/)/.exec(out())?.[1];
    if (url !== undefined) return url;
    if (Date.now() > until) throw new Error(`no URL printed: ${out()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const replay = (url: string, ids: string[], auth?: string) =>
  fetch(new URL('api/replay', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
    body: JSON.stringify({ ids }),
  });

describe('postback dashboard', () => {
  it('serves the page and the API on 127.0.0.1, read-only without --token-env, and stops on the signal', async () => {
    const { file } = await seeded();
    const io = captureIo();
    const exit = main(['dashboard', '--db', file, '--port', '0'], io);
    const url = await waitForUrl(io.out);
    expect(new URL(url).hostname).toBe('127.0.0.1');
    expect(io.out()).toContain('read-only');
    const overview = await (await fetch(new URL('api/overview', url))).json();
    expect(overview).toMatchObject({ counts: { dead: 2 }, writable: false });
    expect((await fetch(url)).headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await replay(url, ['x'], TOKEN)).status).toBe(403);
    io.controller.abort();
    expect(await exit).toBe(0);
  });

  it('with --token-env, replays dead jobs for requests carrying the token from that variable', async () => {
    const { file } = await seeded();
    const io = captureIo({ env: { OPS_TOKEN: TOKEN } });
    const exit = main(['dashboard', '--db', file, '--port', '0', '--token-env', 'OPS_TOKEN'], io);
    const url = await waitForUrl(io.out);
    expect(io.out()).not.toContain(TOKEN);
    const { jobs } = await (await fetch(new URL('api/jobs?state=dead', url))).json();
    const ids = jobs.map((j: { id: string }) => j.id);
    expect((await replay(url, ids)).status).toBe(403);
    expect(await (await replay(url, ids, TOKEN)).json()).toEqual({ replayed: 2 });
    io.controller.abort();
    expect(await exit).toBe(0);
  });

  it('refuses an unset or short token variable (exit 2) without printing the token', async () => {
    const { file } = await seeded();
    const unset = captureIo();
    expect(await main(['dashboard', '--db', file, '--port', '0', '--token-env', 'NOPE'], unset)).toBe(2);
    expect(unset.err()).toContain('NOPE is not set');
    const short = captureIo({ env: { OPS_TOKEN: 'short-secret' } });
    expect(await main(['dashboard', '--db', file, '--port', '0', '--token-env', 'OPS_TOKEN'], short)).toBe(2);
    expect(short.err()).toContain('at least 16 characters');
    expect(short.err() + short.out()).not.toContain('short-secret');
  });

  it('refuses a database file that does not exist (exit 3) and is listed by --help', async () => {
    const io = captureIo();
    expect(await main(['dashboard', '--db', '/nonexistent/postback.db'], io)).toBe(3);
    const help = captureIo();
    await main(['--help'], help);
    expect(help.out()).toMatch(/dashboard\s+Serve the web dashboard/);
  });
});
