/**
 * `postback dashboard`: serves the dashboard over a SQLite outbox on 127.0.0.1, read-only unless
 * `--token-env` names a variable holding the token; the token never comes from a flag value. Real HTTP
 * on an ephemeral port, in process through `main(args, io)`.
 */
import { request } from 'node:http';
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

/** A GET naming its own `Host` (fetch cannot set one). */
function getWithHost(url: string, host: string, token?: string): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}api/overview`,
        headers: { host, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

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

  it('on loopback answers only to loopback Host names and --allow-host ones (421 for a rebound name)', async () => {
    const { file } = await seeded();
    const io = captureIo();
    const exit = main(['dashboard', '--db', file, '--port', '0', '--allow-host', 'ops.internal'], io);
    const url = await waitForUrl(io.out);
    const port = new URL(url).port;
    expect(io.out()).toContain('answers to Host: localhost, 127.0.0.1, [::1], ops.internal');
    expect(await getWithHost(url, `rebind.attacker.example:${port}`)).toBe(421);
    expect(await getWithHost(url, `localhost:${port}`)).toBe(200);
    expect(await getWithHost(url, `ops.internal:${port}`)).toBe(200);
    io.controller.abort();
    expect(await exit).toBe(0);
  });

  it('beyond loopback needs --token-env (exit 2), and then every read needs the token', async () => {
    const { file } = await seeded();
    const none = captureIo();
    expect(await main(['dashboard', '--db', file, '--port', '0', '--host', '0.0.0.0'], none)).toBe(2);
    expect(none.err()).toContain('--token-env');
    const io = captureIo({ env: { OPS_TOKEN: TOKEN } });
    const exit = main(
      ['dashboard', '--db', file, '--port', '0', '--host', '0.0.0.0', '--token-env', 'OPS_TOKEN'],
      io,
    );
    const url = await waitForUrl(io.out);
    expect(new URL(url).hostname).toBe('127.0.0.1');
    expect(io.out()).toContain('every read needs the token');
    expect((await fetch(new URL('api/jobs?state=dead', url))).status).toBe(401);
    const listed = await fetch(new URL('api/jobs?state=dead', url), {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect((await listed.json()).jobs).toHaveLength(2);
    expect((await fetch(url)).status).toBe(200); // the page itself holds nothing
    io.controller.abort();
    expect(await exit).toBe(0);
  });

  it('refuses a database file that does not exist (exit 3) and is listed by --help', async () => {
    const io = captureIo();
    expect(await main(['dashboard', '--db', '/nonexistent/postback.db'], io)).toBe(3);
    const help = captureIo();
    await main(['--help'], help);
    expect(help.out()).toMatch(/dashboard\s+Serve the web dashboard/);
  });
});
