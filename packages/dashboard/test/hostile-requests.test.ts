/**
 * Nothing a client sends stops the process that mounts the dashboard. Each mount the README shows runs in
 * a child process without an `unhandledRejection` handler (as a shop's process would): hostile raw
 * requests (methods the Fetch API refuses, bad `Host` values, targets no URL parser takes, bad `%`
 * escapes, bodies cut off, huge headers) each get a 4xx or a closed connection, the next good request is
 * answered, nothing is logged as a store failure, and the process is still running at the end. The
 * bodies a framework already parsed (`express.json()`, Fastify) still reach replay, purge and held decisions.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const HOST_SCRIPT = fileURLToPath(new URL('./hosts/mounts.ts', import.meta.url));
const TOKEN = 'mounts-token-0123456789abcdef';
const MOUNTS = [
  'node',
  'express4',
  'express5',
  'express4-json',
  'express5-json',
  'koa',
  'koa-bodyparser',
  'fastify',
  'hono',
  'fetch',
] as const;

interface Host {
  child: ChildProcessWithoutNullStreams;
  base: URL;
  stderr: () => string;
}
let host: Host | undefined;

afterEach(() => {
  host?.child.kill('SIGKILL');
  host = undefined;
});

async function startHost(mount: string): Promise<Host> {
  const child = spawn(process.execPath, ['--conditions=@postback/source', HOST_SCRIPT, mount], {
    env: { ...process.env, DASHBOARD_TOKEN: TOKEN },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  child.stderr.on('data', (d) => {
    err += String(d);
  });
  const base = await new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL from the host: ${err}`)), 20_000);
    child.stdout.on('data', () => {
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) {
        clearTimeout(timer);
        resolve(new URL(line));
      }
    });
    child.once('exit', (code) => reject(new Error(`the host exited (${code}): ${err}`)));
  });
  return { child, base, stderr: () => err };
}

/** Sends raw bytes; resolves with the status of the answer, or null when the server closed without one. */
function rawRequest(base: URL, bytes: string | Buffer, opts: { cut?: boolean } = {}): Promise<number | null> {
  return new Promise((resolve) => {
    const socket = connect(Number(base.port), base.hostname);
    let text = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve(status === undefined ? null : Number(status));
    };
    const timer = setTimeout(done, 3_000);
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (text.includes('\r\n\r\n')) done();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.on('connect', () => {
      socket.write(bytes);
      // A body cut off: the client goes away in the middle of it.
      if (opts.cut === true) setTimeout(() => socket.destroy(), 50);
    });
  });
}

type Expect = '4xx' | 'below-500' | 'no-answer-ok';
interface Hostile {
  name: string;
  bytes: (path: string, host: string) => string | Buffer;
  expect: Expect;
  cut?: boolean;
}

const req = (line: string, headers: string[] = [], body = '') =>
  `${line}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`;
const auth = `Authorization: Bearer ${TOKEN}`;
const json = 'Content-Type: application/json';

const HOSTILE: Hostile[] = [
  ...['TRACE', 'TRACK', 'CONNECT', 'PROPFIND', 'PATCH', 'DELETE', 'PUT', 'OPTIONS'].map(
    (method): Hostile => ({
      name: `${method} request`,
      bytes: (p, h) => req(`${method} ${p} HTTP/1.1`, [`Host: ${h}`]),
      expect: method === 'CONNECT' ? 'no-answer-ok' : 'below-500',
    }),
  ),
  ...['[', 'a b', 'x:99999999', '[::1', '', 'h\u00e9h', 'localhost:-1', 'a/b', '%zz'].map(
    (value): Hostile => ({
      name: `Host ${JSON.stringify(value)}`,
      bytes: (p) => Buffer.from(req(`GET ${p}api/overview HTTP/1.1`, [`Host: ${value}`]), 'latin1'),
      expect: '4xx',
    }),
  ),
  {
    name: 'two Host headers',
    bytes: (p, h) => req(`GET ${p}api/overview HTTP/1.1`, [`Host: ${h}`, 'Host: other']),
    expect: '4xx',
  },
  { name: 'HTTP/1.0 without Host', bytes: (p) => req(`GET ${p}api/overview HTTP/1.0`), expect: 'below-500' },
  ...['//[', '//a:b', 'http://[/x', '//:99999/metrics', '*', '/ops/%', '/%'].map(
    (target): Hostile => ({
      name: `target ${target}`,
      bytes: (_, h) => req(`GET ${target} HTTP/1.1`, [`Host: ${h}`]),
      // Outside the mount, where the shop behind may answer with its own page.
      expect: 'below-500',
    }),
  ),
  // Under the mount: what the dashboard would otherwise redirect to `./<last segment>/`.
  ...['x/../../etc/passwd', '%2e%2e/x', `${'a'.repeat(6_000)}`, 'a//b', '%00', 'x%ZZ', '?q=%ZZ'].map(
    (target): Hostile => ({
      name: `target <base>${target.slice(0, 40)}`,
      bytes: (p, h) => req(`GET ${p}${target} HTTP/1.1`, [`Host: ${h}`]),
      expect: '4xx',
    }),
  ),
  {
    name: 'a GET whose body never comes',
    bytes: (p, h) => `GET ${p}api/overview HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 100\r\n\r\n0123456789`,
    expect: '4xx',
  },
  ...[
    'api/jobs/%ZZ',
    'api/jobs/%E0%A4%A',
    'api/jobs/%ED%A0%80',
    'api/jobs?account=%00',
    'api/jobs?offset=1e999',
  ].map(
    (target): Hostile => ({
      name: `bad escape or value ${target}`,
      bytes: (p, h) => req(`GET ${p}${target} HTTP/1.1`, [`Host: ${h}`]),
      expect: '4xx',
    }),
  ),
  {
    name: 'an order id of 10,000 characters',
    bytes: (p, h) => req(`GET ${p}api/jobs?orderId=${'o'.repeat(10_000)} HTTP/1.1`, [`Host: ${h}`]),
    expect: '4xx',
  },
  {
    name: 'headers of 64 KiB',
    bytes: (p, h) => req(`GET ${p} HTTP/1.1`, [`Host: ${h}`, `X-Big: ${'b'.repeat(65_536)}`]),
    expect: 'no-answer-ok',
  },
  {
    name: 'a POST body cut off (Content-Length)',
    bytes: (p, h) =>
      `POST ${p}api/replay HTTP/1.1\r\nHost: ${h}\r\n${auth}\r\n${json}\r\nContent-Length: 100\r\n\r\n{"ids":[`,
    expect: 'no-answer-ok',
    cut: true,
  },
  {
    name: 'a POST body cut off (chunked)',
    bytes: (p, h) =>
      `POST ${p}api/purge HTTP/1.1\r\nHost: ${h}\r\n${auth}\r\n${json}\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"ids":[`,
    expect: 'no-answer-ok',
    cut: true,
  },
  {
    name: 'a bad chunk size',
    bytes: (p, h) =>
      `POST ${p}api/purge HTTP/1.1\r\nHost: ${h}\r\n${auth}\r\n${json}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    expect: 'no-answer-ok',
  },
  ...['{"ids":', 'null', '[]', '{"ids":[1,2]}', '{"ids":["\\ud800"]}', '{"group":"x"}', '"x"'].map(
    (body): Hostile => ({
      name: `POST body ${body}`,
      bytes: (p, h) =>
        req(
          `POST ${p}api/purge HTTP/1.1`,
          [`Host: ${h}`, auth, json, `Content-Length: ${body.length}`],
          body,
        ),
      expect: '4xx',
    }),
  ),
  ...[
    '{"account":',
    '[]',
    '{"account":null}',
    '{"account":1,"campaignId":null}',
    '{"account":"\\ud800","campaignId":null}',
    '{"account":null,"campaignId":"../x"}',
  ].map(
    (body): Hostile => ({
      name: `held decision body ${body}`,
      bytes: (p, h) =>
        req(
          `POST ${p}api/held-drop HTTP/1.1`,
          [`Host: ${h}`, auth, json, `Content-Length: ${Buffer.byteLength(body)}`],
          body,
        ),
      expect: '4xx',
    }),
  ),
  {
    name: 'a GET of a held decision',
    bytes: (p, h) => req(`GET ${p}api/held-send HTTP/1.1`, [`Host: ${h}`, auth]),
    expect: '4xx',
  },
  {
    name: 'a POST body of 2 MiB',
    bytes: (p, h) => {
      const body = `{"ids":["${'x'.repeat(2 * 1024 * 1024)}"]}`;
      return req(
        `POST ${p}api/purge HTTP/1.1`,
        [`Host: ${h}`, auth, json, `Content-Length: ${body.length}`],
        body,
      );
    },
    expect: 'no-answer-ok',
  },
  {
    name: 'a token of 20,000 characters',
    bytes: (p, h) =>
      req(`POST ${p}api/check HTTP/1.1`, [`Host: ${h}`, `Authorization: Bearer ${'t'.repeat(20_000)}`, json]),
    expect: 'no-answer-ok',
  },
];

/**
 * Requests a Fetch server decides on before the handler sees them, where any answer below 500 is right:
 * `@hono/node-server` resolves dot segments (as every WHATWG URL parser does), so the handler at the root
 * gets `/etc/passwd`, a well-formed path it treats as a mount path (a 308 to `./passwd/`); it builds no
 * body for a GET, so one that never comes is never waited for.
 */
const SERVER_DECIDES: Record<string, string[]> = {
  fetch: ['target <base>x/../../etc/passwd', 'target <base>%2e%2e/x', 'a GET whose body never comes'],
  hono: ['a GET whose body never comes'],
};

async function good(base: URL): Promise<number> {
  const res = await fetch(new URL('api/overview', base), { headers: { authorization: `Bearer ${TOKEN}` } });
  await res.arrayBuffer();
  return res.status;
}

describe.each(MOUNTS)('the dashboard mounted in %s', (mount) => {
  it('answers every hostile request with a 4xx (or closes), lives, and answers the next good request', async () => {
    host = await startHost(mount);
    const { base } = host;
    const hostHeader = base.host;
    const failures: string[] = [];
    for (const hostile of HOSTILE) {
      const status = await rawRequest(base, hostile.bytes(base.pathname, hostHeader), { cut: hostile.cut });
      const decided = (SERVER_DECIDES[mount] ?? []).includes(hostile.name);
      const fine = decided
        ? status !== null && status < 500
        : hostile.expect === 'no-answer-ok'
          ? status === null || (status >= 400 && status < 500)
          : hostile.expect === '4xx'
            ? status !== null && status >= 400 && status < 500
            : status !== null && status < 500;
      if (!fine) failures.push(`${hostile.name}: ${status ?? 'no answer'}`);
      if (host.child.exitCode !== null || host.child.signalCode !== null) {
        failures.push(`${hostile.name}: the host process exited: ${host.stderr().slice(-2_000)}`);
        break;
      }
      const next = await good(base).catch((error: Error) => error.message);
      if (next !== 200) failures.push(`${hostile.name}: the next good request got ${next}`);
    }
    expect(failures).toEqual([]);
    expect(host.child.exitCode).toBeNull();
    // The dashboard logged client errors only, never a store failure.
    const lines = host
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('postback dashboard:'));
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(line).toMatch(/^postback dashboard: refused a request \(4\d\d\): /);
  }, 120_000);

  it('replays, purges and decides held orders with the body the framework may have parsed already', async () => {
    host = await startHost(mount);
    const { base } = host;
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const listed = await (await fetch(new URL('api/jobs?state=dead', base), { headers })).json();
    const [first, second] = listed.jobs.map((j: { id: string }) => j.id);
    const replay = await fetch(new URL('api/replay', base), {
      method: 'POST',
      headers,
      body: JSON.stringify({ ids: [first] }),
    });
    expect(await replay.json()).toEqual({ replayed: 1 });
    const purge = await fetch(new URL('api/purge', base), {
      method: 'POST',
      headers,
      body: JSON.stringify({ ids: [second] }),
    });
    expect(await purge.json()).toEqual({ purged: 1 });
    // A held decision reads its body the same way (no problem is held here: nothing to decide).
    const held = await fetch(new URL('api/held-drop', base), {
      method: 'POST',
      headers,
      body: JSON.stringify({ account: null, campaignId: 'cmp_none' }),
    });
    expect(await held.json()).toEqual({ decided: 0, sent: 0, dropped: 0, expired: 0 });
  }, 60_000);
});
