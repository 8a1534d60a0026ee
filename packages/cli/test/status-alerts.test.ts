/**
 * `postback status`: deadlines at risk, worker heart-beats and pauses, and the `--fail-on-*` exit codes
 * that make it a cron alert.
 */
import type { Outbox, WorkerBeat } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { createStatusCommand } from '../src/commands/status.ts';
import { type CommandContext, defaultContext } from '../src/context.ts';
import { STATUS_EXIT } from '../src/specs/status.ts';
import { captureIo } from './capture-io.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { seedDead, token } from './db-fixture.ts';

setUpCommandHarness();

const H = 3_600_000;
const D = 24 * H;

function beat(workerId: string, fields: Partial<WorkerBeat> = {}): WorkerBeat {
  return {
    workerId,
    at: Date.now() - 12_000,
    state: 'running',
    pausedUntil: null,
    pauseReason: null,
    version: '1.2.3',
    host: 'shop-1',
    pid: 4242,
    pausedAccounts: [],
    ...fields,
  };
}

/** One pending confirmation whose deadline is 11 h away, one with ~7 days left, one dead job. */
async function seed(beats: WorkerBeat[] = []): Promise<void> {
  const outbox = db.open();
  await seedDead(outbox, ['dead-1'], 'Ad service answered 404: click_token not found');
  await outbox.confirm({
    orderId: 'soon',
    valueMicros: 5,
    click: { token: token(1), clickedAt: Date.now() - 7 * D + 12 * H },
  });
  await outbox.confirm({
    orderId: 'later',
    valueMicros: 5,
    click: { token: token(2), clickedAt: Date.now() },
  });
  for (const b of beats) await outbox.beat(b);
  await outbox.close();
}

describe('postback status: deadlines at risk and workers', () => {
  it('counts open jobs whose deadline is within --at-risk-within (24h by default) and lists recent workers, as JSON', async () => {
    await seed([
      beat('shop-1:4242:a'),
      beat('shop-2:77:b', {
        state: 'paused',
        pausedUntil: Date.now() + 45_000,
        pauseReason: 'Ad service answered 401: invalid API key',
      }),
      beat('gone:1:c', { at: Date.now() - 10 * 60_000 }),
    ]);
    const { code, out } = await run(['status', '--db', db.file, '--json']);
    expect(code).toBe(0);
    const status = JSON.parse(out);
    expect(status.atRisk).toEqual({ count: 1, withinMs: 24 * H });
    expect(status.workersSeenWithinMs).toBe(120_000);
    expect(status.workers.map((w: { workerId: string }) => w.workerId).sort()).toEqual([
      'shop-1:4242:a',
      'shop-2:77:b',
    ]);
    const paused = status.workers.find((w: { workerId: string }) => w.workerId === 'shop-2:77:b');
    expect(paused).toMatchObject({
      state: 'paused',
      pauseReason: 'Ad service answered 401: invalid API key',
      version: '1.2.3',
      host: 'shop-1',
      pid: 4242,
    });
    expect(paused.lastSeenAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(paused.pausedUntil).toMatch(/Z$/);
    expect(status.paused).toBe(true);
    expect(status.alerts).toEqual([]);

    const narrow = JSON.parse(
      (await run(['status', '--db', db.file, '--json', '--at-risk-within', '1h'])).out,
    );
    expect(narrow.atRisk).toEqual({ count: 0, withinMs: H });
    const wide = JSON.parse(
      (await run(['status', '--db', db.file, '--json', '--worker-seen-within', '15m'])).out,
    );
    expect(wide.workers).toHaveLength(3);
  });

  it('never counts a job past its deadline as at risk: it is lost (expired at the next claim), counted apart', async () => {
    await seed();
    const outbox = db.open();
    // Clicked 8 days ago: its window has closed; no worker has claimed it yet, so it is still pending.
    await outbox.confirm({
      orderId: 'lost',
      valueMicros: 5,
      click: { token: token(3), clickedAt: Date.now() - 8 * D },
    });
    await outbox.close();
    const status = JSON.parse((await run(['status', '--db', db.file, '--json'])).out);
    expect(status.counts.pending).toBe(3);
    expect(status.atRisk).toEqual({ count: 1, withinMs: 24 * H });
    expect(status.pastDeadline).toBe(1);
    const text = (await run(['status', '--db', db.file])).out;
    expect(text).toMatch(/^at risk: 1 open job\(s\) with a deadline within 1d/m);
    expect(text).toMatch(/^past deadline: 1 open job\(s\) whose deadline has passed/m);
    // Only a deadline still ahead is an alert: with the one at risk moved out of the window, none.
    const onlyLost = await run(['status', '--db', db.file, '--fail-on-at-risk', '--at-risk-within', '1h']);
    expect(onlyLost.code, onlyLost.err).toBe(0);
  });

  it('shows them as text: the at-risk count, each worker with its pause and when it was last seen', async () => {
    await seed([
      beat('shop-1:4242:a'),
      beat('shop-2:77:b', { state: 'paused', pausedUntil: Date.now() + 45_000, pauseReason: 'refused\nkey' }),
    ]);
    const { code, out } = await run(['status', '--db', db.file]);
    expect(code).toBe(0);
    expect(out).toMatch(
      /\nat risk: 1 open job\(s\) with a deadline within 1d \(see 'postback jobs --state pending,inflight --deadline-within 1d'\)\n/,
    );
    expect(out).toMatch(/\nworkers \(seen in the last 2m\):\n/);
    expect(out).toMatch(/\n {2}shop-1:4242:a {2}running {2}version 1\.2\.3 {2}last seen \d+s ago \(\S+Z\)\n/);
    expect(out).toMatch(
      / {2}shop-2:77:b {2}paused .* paused until \S+Z \(in \d+s\) \(unknown\): refused\\u\{a\}key\n/,
    );
    expect(out).toMatch(/\ndelivery: paused \(1 of 2 worker\(s\)\)\n/);
    expect(out).toMatch(/\nnearest deadline: \S+Z \(in 1[01]h \d+m\) {2}confirm order soon/);
  });

  it('says when no worker was seen, counting a worker whose last beat said it stopped as none', async () => {
    await seed([beat('old:1:a', { at: Date.now() - 5 * 60_000 }), beat('done:2:b', { state: 'stopped' })]);
    const { out } = await run(['status', '--db', db.file]);
    expect(out).toMatch(/\n {2}done:2:b {2}stopped /);
    expect(out).toMatch(/\ndelivery: no worker\n/);
    const none = await run(['status', '--db', db.file, '--worker-seen-within', '5s']);
    expect(none.out).toMatch(/\nworkers: no worker seen in the last 5s\n/);
  });
});

describe('postback status --fail-on-*', () => {
  it('exits 0 when nothing asked for holds, whatever else holds', async () => {
    await seed([beat('shop-1:1:a')]);
    const { code, err } = await run(['status', '--db', db.file, '--fail-on-paused', '--fail-on-no-worker']);
    expect(code).toBe(0);
    expect(err).toBe('');
  });

  it('exits with the code of each condition, and the highest when several hold', async () => {
    await seed();
    const dead = await run(['status', '--db', db.file, '--fail-on-dead']);
    expect(dead.code).toBe(STATUS_EXIT.dead);
    expect(dead.err).toBe('postback status: alert: 1 dead job(s)\n');
    const atRisk = await run(['status', '--db', db.file, '--fail-on-at-risk']);
    expect(atRisk.code).toBe(STATUS_EXIT.atRisk);
    expect(atRisk.err).toMatch(/alert: 1 open job\(s\) with a deadline within 1d/);
    expect((await run(['status', '--db', db.file, '--fail-on-at-risk', '--at-risk-within', '1h'])).code).toBe(
      0,
    );
    const noWorker = await run([
      'status',
      '--db',
      db.file,
      '--fail-on-no-worker',
      '--fail-on-dead',
      '--json',
    ]);
    expect(noWorker.code).toBe(STATUS_EXIT.noWorker);
    expect(JSON.parse(noWorker.out).alerts).toEqual(['dead', 'no-worker']);
    expect([STATUS_EXIT.dead, STATUS_EXIT.atRisk, STATUS_EXIT.paused, STATUS_EXIT.noWorker]).toEqual([
      10, 11, 12, 14,
    ]);
  });

  it('exits 12 when a worker seen is paused', async () => {
    await seed([beat('shop-1:1:a', { state: 'probing', pausedUntil: Date.now(), pauseReason: '401' })]);
    const { code, out, err } = await run(['status', '--db', db.file, '--fail-on-paused', '--json']);
    expect(code).toBe(STATUS_EXIT.paused);
    expect(JSON.parse(out)).toMatchObject({ paused: true, alerts: ['paused'] });
    expect(err).toMatch(/alert: delivery is paused/);
  });

  it('on a backend that keeps no heart-beats, says so and refuses --fail-on-paused and --fail-on-no-worker', async () => {
    await seed();
    const noBeats: CommandContext = {
      ...defaultContext,
      openBackend: async (flags, env) => {
        const opened = await defaultContext.openBackend(flags, env);
        const features = { ...opened.outbox.features, heartbeats: false };
        const outbox = new Proxy(opened.outbox, {
          get: (target, key) => (key === 'features' ? features : Reflect.get(target, key)),
        }) as Outbox;
        return { ...opened, outbox };
      },
    };
    const plain = captureIo();
    expect(await createStatusCommand(noBeats).run(['--db', db.file], plain)).toBe(0);
    expect(plain.out()).toMatch(/\nworkers: unknown \(the SQLite backend keeps no worker heart-beats\)\n/);
    expect(plain.out()).toMatch(/\ndelivery: unknown\n/);
    const json = captureIo();
    await createStatusCommand(noBeats).run(['--db', db.file, '--json'], json);
    expect(JSON.parse(json.out())).toMatchObject({ workers: null, paused: null });
    const refused = captureIo();
    expect(await createStatusCommand(noBeats).run(['--db', db.file, '--fail-on-no-worker'], refused)).toBe(2);
    expect(refused.err()).toMatch(
      /keeps no worker heart-beats: --fail-on-paused and --fail-on-no-worker cannot be checked/,
    );
  });
});

describe('postback status: paused accounts (per-account keys)', () => {
  const pause = (account: string | null, fields: Partial<WorkerBeat['pausedAccounts'][number]> = {}) => ({
    account,
    since: Date.now() - 120_000,
    until: Date.now() + 30_000,
    reason: 'Ad service answered 401: invalid API key',
    status: 401 as number | null,
    ...fields,
  });

  it('merges the accounts paused by the running workers, one per account, as JSON and text', async () => {
    await seed([
      beat('shop-1:1:a', {
        pausedAccounts: [
          pause('shop-18'),
          pause(null, { status: null, reason: 'no API key for account (no account)' }),
        ],
      }),
      beat('shop-2:2:b', {
        at: Date.now() - 2_000,
        pausedAccounts: [
          pause('shop-18', {
            since: Date.now() - 60_000,
            reason: 'Ad service answered 403: forbidden',
            status: 403,
          }),
        ],
      }),
      beat('done:3:c', { state: 'stopped', pausedAccounts: [pause('shop-99')] }),
    ]);
    const { code, out, err } = await run(['status', '--db', db.file, '--json', '--fail-on-paused']);
    expect(code).toBe(STATUS_EXIT.paused);
    expect(err).toMatch(
      /^postback status: alert: 2 account\(s\) paused: shop-18 \(auth: the key was refused or is missing, until \S+Z\), \(no account\) \(auth: the key was refused or is missing, until \S+Z\)\n$/,
    );
    const status = JSON.parse(out);
    expect(status.paused).toBe(false);
    expect(status.alerts).toEqual(['accounts-paused']);
    expect(status.pausedAccounts).toEqual([
      expect.objectContaining({
        account: 'shop-18',
        status: 403,
        reason: 'Ad service answered 403: forbidden',
        workers: ['shop-2:2:b', 'shop-1:1:a'],
      }),
      expect.objectContaining({ account: null, status: null, workers: ['shop-1:1:a'] }),
    ]);
    expect(status.pausedAccounts[0].since).toMatch(/Z$/);
    const worker = status.workers.find((w: { workerId: string }) => w.workerId === 'shop-1:1:a');
    expect(worker.pausedAccounts).toHaveLength(2);

    const text = (await run(['status', '--db', db.file])).out;
    expect(text).toMatch(/\npaused accounts \(2; their jobs wait, the others deliver\):\n/);
    expect(text).toMatch(
      /\n {2}shop-18 {2}403 {2}auth {2}since \S+Z \(2m[^)]*ago\) {2}next probe \S+Z \(in \d+s\): Ad service answered 403: forbidden {2}\(shop-2:2:b, shop-1:1:a\)\n/,
    );
    expect(text).toMatch(
      /\n {2}\(no account\) {2}no key {2}auth {2}since .*: no API key for account \(no account\) {2}\(shop-1:1:a\)\n/,
    );
    expect(text).not.toMatch(/shop-99/);
  });

  it('says none when no running worker paused an account', async () => {
    await seed([beat('shop-1:1:a')]);
    const { code, out } = await run(['status', '--db', db.file, '--fail-on-paused']);
    expect(code).toBe(0);
    expect(out).toMatch(/\npaused accounts: none\n/);
  });
});
