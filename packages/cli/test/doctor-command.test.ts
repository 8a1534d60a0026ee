/**
 * `postback doctor` against a real sandbox over HTTP: each check passes on a healthy set-up and fails,
 * named and with a fix, on the problem it is for; nothing is charged and no key or secret is printed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { doctor as runDoctor } from '../src/index.ts';
import { main } from '../src/main.ts';
import { DOCTOR_EXIT_FAILED } from '../src/specs/doctor.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';
import { type ServiceFixture, startRewritingProxy, startService } from './service-fixture.ts';

const SECRET = 'a-cookie-secret-of-forty-characters-0123';

let db: DbFixture;
let service: ServiceFixture;
const closers: Array<() => Promise<void>> = [];

beforeEach(async () => {
  db = dbFixture();
  service = await startService();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await service?.close();
  db.cleanup();
});

interface Check {
  name: string;
  ok: boolean;
  status: 'pass' | 'fail' | 'skip';
  detail: string;
  fix: string | null;
}

/** Runs `postback doctor` in process with `env`; its exit code, output and checks by name (with --json). */
async function doctor(args: string[], env: Record<string, string>) {
  const io = captureIo({ env });
  const code = await main(['doctor', ...args], io);
  const out = io.out();
  const checks = args.includes('--json')
    ? new Map((JSON.parse(out) as { checks: Check[] }).checks.map((c) => [c.name, c]))
    : new Map<string, Check>();
  return { code, out, err: io.err(), checks, get: (name: string) => checks.get(name) as Check };
}

/** Starts `postback worker` in process (it beats at start) until the test ends. */
async function liveWorker(): Promise<void> {
  const io = captureIo({ env: { POSTBACK_API_KEY: service.keys.conversions } });
  const running = main(['worker', '--db', db.file, '--base-url', service.url, '--poll-ms', '50'], io);
  closers.push(async () => {
    io.controller.abort();
    await running;
  });
  const outbox = db.open();
  try {
    for (let i = 0; i < 200; i++) {
      if ((await outbox.workers({ now: Date.now(), sinceMs: 60_000 })).length > 0) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the worker never beat');
  } finally {
    await outbox.close();
  }
}

describe('postback doctor', () => {
  it('passes every check with a key of every scope, s2s campaigns, a live worker and a long secret', async () => {
    await service.campaign('s2s');
    await liveWorker();
    const env = {
      POSTBACK_API_KEY: service.keys.all,
      POSTBACK_SECRET: SECRET,
      POSTBACK_API_URL: service.url,
    };
    const result = await doctor(['--db', db.file, '--json'], env);
    expect([...result.checks.values()].filter((c) => c.status !== 'pass')).toEqual([]);
    expect(result.code).toBe(0);
    expect(result.get('key').detail).toMatch(/conversions scope.*404.*extra scope\(s\) read, write/);
    expect(result.get('campaigns').detail).toMatch(/1 campaign\(s\): 1 on s2s/);
    expect(result.get('worker').detail).toMatch(/1 live worker/);
    // The probe reversed nothing and charged nothing.
    const report = await service.sandbox.control.conversions(service.accountId);
    expect(report.conversions).toEqual([]);
    expect(report.counts.requests).toBe(0);

    const text = await doctor(['--db', db.file], env);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^ok {4}base-url {8}GET .*answered 401/m);
    expect(text.out).toMatch(/every check passed\n$/);
    for (const out of [result.out, text.out]) {
      expect(out).not.toContain(service.keys.all);
      expect(out).not.toContain(SECRET);
    }
  });

  it('passes the key check of a conversions-only key, and skips the campaign list it may not read', async () => {
    await db.open().close();
    const env = { POSTBACK_API_KEY: service.keys.conversions, POSTBACK_SECRET: SECRET };
    const result = await doctor(
      ['--db', db.file, '--base-url', service.url, '--json', '--skip', 'worker'],
      env,
    );
    expect(result.get('key')).toMatchObject({ ok: true, status: 'pass' });
    expect(result.get('key').detail).not.toMatch(/extra scope/);
    expect(result.get('campaigns')).toMatchObject({ ok: true, status: 'skip' });
    expect(result.get('campaigns').detail).toMatch(/no read scope/);
    expect(result.get('worker')).toMatchObject({ status: 'skip', detail: 'skipped, as asked' });
    expect(result.code).toBe(0);
  });

  it('fails the key check of a key without the conversions scope (403 to the probe), and of a refused key', async () => {
    const read = await doctor(
      ['--base-url', service.url, '--json', '--skip', 'outbox,worker,recent-answers,secret'],
      {
        POSTBACK_API_KEY: service.keys.read,
      },
    );
    expect(read.code).toBe(DOCTOR_EXIT_FAILED);
    expect(read.get('key')).toMatchObject({ ok: false, status: 'fail' });
    expect(read.get('key').detail).toMatch(/lacks the conversions scope.*403/);
    expect(read.get('key').fix).toMatch(/conversions scope/);
    // The read key still lists the campaigns.
    expect(read.get('campaigns').status).toBe('pass');
    const requests = await service.sandbox.control.requests({ key: 'read' });
    expect(requests.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toContain(
      'POST /v1/conversions/s2s/refund 403',
    );

    const wrong = await doctor(
      ['--base-url', service.url, '--json', '--skip', 'outbox,worker,recent-answers,secret'],
      {
        POSTBACK_API_KEY: 'pbsk_not_a_key_of_this_service_000000',
      },
    );
    expect(wrong.get('key').detail).toMatch(/refused the key \(401/);
    expect(wrong.out).not.toContain('pbsk_not_a_key_of_this_service_000000');
  });

  it('fails the base-url check for a wrong path and for a server that is not the service, and checks no key there', async () => {
    const env = { POSTBACK_API_KEY: service.keys.all };
    const skipLocal = ['--skip', 'outbox,worker,recent-answers,secret', '--json'];
    const wrongPath = await doctor(['--base-url', `${service.url}/api`, ...skipLocal], env);
    expect(wrongPath.code).toBe(DOCTOR_EXIT_FAILED);
    expect(wrongPath.get('base-url').detail).toMatch(/\/api\/v1\/me without a key answered 404.*wrong path/);
    expect(wrongPath.get('base-url').fix).toMatch(/part before \/v1/);
    expect(wrongPath.get('key')).toMatchObject({ status: 'skip' });

    const page = createServer((_, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Welcome</h1>'),
    );
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => page.close(() => resolve())));
    const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    const proxy = await doctor(['--base-url', pageUrl, ...skipLocal], env);
    expect(proxy.get('base-url').detail).toMatch(
      /answered 200 \(text\/html, no JSON detail\): not the service/,
    );
    expect(proxy.get('clock').status).toBe('skip');
  });

  it('fails the base-url check for a path the service authenticates but does not serve, checked with the key', async () => {
    const env = { POSTBACK_API_KEY: service.keys.all };
    const skipLocal = ['--skip', 'outbox,worker,recent-answers,secret', '--json'];
    // The sandbox, like a router that authenticates before it routes, answers 401 to any /v1 path
    // without a key: only the request with the key tells the real path from a wrong one.
    const under = await doctor(['--base-url', `${service.url}/v1/conversions`, ...skipLocal], env);
    expect(under.code).toBe(DOCTOR_EXIT_FAILED);
    expect(under.get('base-url')).toMatchObject({ ok: false, status: 'fail' });
    expect(under.get('base-url').detail).toMatch(
      /\/v1\/conversions\/v1\/me with the key answered 404 .*no such path there/,
    );
    expect(under.get('base-url').fix).toMatch(/part before \/v1/);
    expect(under.get('key')).toMatchObject({ status: 'skip' });

    const right = await doctor(['--base-url', service.url, ...skipLocal], env);
    expect(right.get('base-url')).toMatchObject({ ok: true, status: 'pass' });
    expect(right.get('base-url').detail).toMatch(/with the key answered 200 .*the service's path/);
    const conversionsOnly = { POSTBACK_API_KEY: service.keys.conversions };
    const scoped = await doctor(['--base-url', service.url, ...skipLocal], conversionsOnly);
    expect(scoped.get('base-url').detail).toMatch(/with the key answered 403 \(detail: .*the service's path/);
  });

  it('refuses a --base-url ending in /v1 as a usage error naming it (exit 2), and doctor() fails its check', async () => {
    const env = { POSTBACK_API_KEY: service.keys.all };
    for (const url of [`${service.url}/v1`, `${service.url}/v1/`]) {
      const run = await doctor(['--base-url', url, '--skip', 'outbox,worker,recent-answers,secret'], env);
      expect(run.code).toBe(2);
      expect(run.err).toMatch(/--base-url must not end in \/v1: \/v1 is added to every path/);
    }
    const report = await runDoctor({
      baseUrl: `${service.url}/v1`,
      apiKey: service.keys.all,
      skip: ['outbox', 'worker', 'recent-answers', 'secret'],
    });
    const check = report.checks.find((c) => c.name === 'base-url');
    expect(check).toMatchObject({ ok: false, status: 'fail' });
    expect(check?.detail).toMatch(/ends in \/v1: every request would go to .*\/v1\/v1\//);
    expect(check?.fix).toMatch(/part before \/v1/);
    expect(report.checks.find((c) => c.name === 'key')).toMatchObject({ status: 'skip' });
  });

  it("fails the clock check when the service's clock is ahead of this host's by more than the safety margin", async () => {
    const args = ['--base-url', service.url, '--json', '--skip', 'outbox,worker,recent-answers,secret'];
    const env = { POSTBACK_API_KEY: service.keys.conversions };
    await service.sandbox.control.advanceClock(20 * 60);
    const near = await doctor(args, env);
    expect(near.get('clock')).toMatchObject({ ok: true, status: 'pass' });
    expect(near.get('clock').detail).toMatch(/(20m|19m 59s) ahead of this host's/);
    await service.sandbox.control.advanceClock(2 * 3600);
    const far = await doctor(args, env);
    expect(far.code).toBe(DOCTOR_EXIT_FAILED);
    expect(far.get('clock')).toMatchObject({ ok: false, status: 'fail' });
    expect(far.get('clock').detail).toMatch(/2h (19|20)m ahead of this host's.*safety margin is 1h/);
  });

  it('names each listed campaign on pixel billing, and says "unknown" when the list shows no conversion source', async () => {
    const s2s = await service.campaign('s2s');
    const pixel = await service.campaign('pixel');
    const args = ['--base-url', service.url, '--json', '--skip', 'outbox,worker,recent-answers,secret'];
    const env = { POSTBACK_API_KEY: service.keys.all };
    const listed = await doctor(args, env);
    expect(listed.get('campaigns')).toMatchObject({ ok: false, status: 'fail' });
    expect(listed.get('campaigns').detail).toContain(`${pixel} (pixel)`);
    expect(listed.get('campaigns').detail).not.toContain(s2s);

    // A service that calls the pixel something else, and adds fields: still named, nothing breaks.
    await service.sandbox.control.setVariants(['unknown-enums', 'extra-fields']);
    const other = await doctor(args, env);
    expect(other.get('campaigns').detail).toContain(`${pixel} (app)`);
    expect(other.get('key').ok).toBe(true);
    await service.sandbox.control.clearVariants();

    const hidden = await startRewritingProxy(service.url, (path, body) => {
      if (path !== '/v1/campaigns') return body;
      const { campaigns } = body as { campaigns: Array<Record<string, unknown>> };
      return { campaigns: campaigns.map(({ conversion_source: _, ...rest }) => rest) };
    });
    closers.push(hidden.close);
    const unknown = await doctor([...args.slice(0, 0), '--base-url', hidden.url, ...args.slice(2)], env);
    expect(unknown.get('campaigns')).toMatchObject({ ok: true, status: 'skip' });
    expect(unknown.get('campaigns').detail).toMatch(
      /unknown: 2 campaign\(s\): 0 on s2s, 2 of unknown source/,
    );
  });

  it("names the campaign that a worker's recent answers said is not on s2s", async () => {
    const pixel = await service.campaign('pixel');
    const outbox = db.open();
    for (let i = 0; i < 3; i++) {
      const click = await service.click(pixel);
      await outbox.confirm({
        orderId: `px-${i}`,
        valueMicros: 5_000_000,
        click: { token: click.token, clickedAt: click.clickedAt },
      });
    }
    await outbox.close();
    // A real worker delivers: every confirmation of the pixel campaign is refused with the service's 422.
    const drain = captureIo({ env: { POSTBACK_API_KEY: service.keys.conversions } });
    expect(await main(['worker', '--db', db.file, '--base-url', service.url, '--drain'], drain)).toBe(0);
    const result = await doctor(
      ['--db', db.file, '--base-url', service.url, '--json', '--skip', 'worker,secret'],
      {
        POSTBACK_API_KEY: service.keys.conversions,
      },
    );
    expect(result.code).toBe(DOCTOR_EXIT_FAILED);
    expect(result.get('recent-answers')).toMatchObject({ ok: false, status: 'fail' });
    expect(result.get('recent-answers').detail).toMatch(
      new RegExp(`1 campaign\\(s\\) are not on s2s: ${pixel}: 3 `),
    );
    expect(result.get('recent-answers').fix).toMatch(/switch each to s2s/);

    // Once switched, the list (read with a read key) says so beside the jobs that still wait.
    await service.sandbox.control.setConversionSource(pixel, 's2s');
    const after = await doctor(
      ['--db', db.file, '--base-url', service.url, '--json', '--skip', 'worker,secret'],
      {
        POSTBACK_API_KEY: service.keys.all,
      },
    );
    expect(after.get('recent-answers').detail).toMatch(/the campaign list now shows s2s/);
  });

  it('fails the outbox check for a missing file or none given, and the worker check with no live worker', async () => {
    const env = { POSTBACK_API_KEY: service.keys.conversions, POSTBACK_SECRET: SECRET };
    const missing = await doctor(['--db', join(db.dir, 'nope.db'), '--base-url', service.url, '--json'], env);
    expect(missing.get('outbox')).toMatchObject({ ok: false, status: 'fail' });
    expect(missing.get('outbox').detail).toMatch(/no such database file/);
    expect(missing.get('worker').status).toBe('skip');
    const none = await doctor(['--base-url', service.url, '--json'], env);
    expect(none.get('outbox').detail).toMatch(/no outbox given/);

    await db.open().close();
    const idle = await doctor(['--db', db.file, '--base-url', service.url, '--json'], env);
    expect(idle.get('outbox')).toMatchObject({ ok: true, status: 'pass' });
    expect(idle.get('worker')).toMatchObject({ ok: false, status: 'fail' });
    expect(idle.get('worker').detail).toMatch(/no running worker beat in the last 2m/);
  });

  it('fails the secret check when POSTBACK_SECRET is unset or short, and never prints it', async () => {
    const args = ['--base-url', service.url, '--skip', 'outbox,worker,recent-answers'];
    const unset = await doctor([...args, '--json'], { POSTBACK_API_KEY: service.keys.conversions });
    expect(unset.get('secret')).toMatchObject({ ok: false, detail: 'POSTBACK_SECRET is not set' });
    const short = 'only-twenty-chars-xx';
    const shortRun = await doctor(args, {
      POSTBACK_API_KEY: service.keys.conversions,
      POSTBACK_SECRET: short,
    });
    expect(shortRun.code).toBe(DOCTOR_EXIT_FAILED);
    expect(shortRun.out).toMatch(
      /^FAIL {2}secret {10}POSTBACK_SECRET has 20 characters, fewer than 32\n {22}fix: /m,
    );
    expect(shortRun.out).not.toContain(short);
  });

  it('never prints the key, even when the service echoes it in its errors', async () => {
    await service.sandbox.control.setVariants(['echo-key']);
    const result = await doctor(
      ['--base-url', service.url, '--skip', 'outbox,worker,recent-answers,secret'],
      {
        POSTBACK_API_KEY: service.keys.read,
      },
    );
    expect(result.out).toMatch(/lacks the conversions scope/);
    expect(result.out + result.err).not.toContain(service.keys.read);
  });

  it('refuses an unknown check name and a blank key as usage errors (exit 2)', async () => {
    const bad = await doctor(['--base-url', service.url, '--skip', 'nothing'], {});
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--skip must name checks among base-url, key/);
    const blank = await doctor(['--base-url', service.url], { POSTBACK_API_KEY: ' ' });
    expect(blank.code).toBe(2);
    expect(blank.err).toMatch(/POSTBACK_API_KEY is blank/);
  });
});
