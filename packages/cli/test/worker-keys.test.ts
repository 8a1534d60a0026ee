/**
 * `postback worker` with per-account keys against the real sandbox: two advertiser accounts, each with
 * its own key. A wrong key pauses only its account (its jobs wait, `status` shows why) while the other
 * delivers; fixing the keys file delivers the paused account's jobs without a restart. No key is ever
 * printed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareSandboxWorld, type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/helpers/worker-process.ts';
import { main } from '../src/main.ts';
import { STATUS_EXIT } from '../src/specs/status.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';

let db: DbFixture;
// Two accounts on one sandbox: `shopA` made by startSandboxWorld, `shopB` by prepareSandboxWorld.
let shopA: SandboxWorld;
let shopB: SandboxWorld;
let dir: string;
let keysFile: string;
const WRONG_KEY = 'pbsk_wrong_key_of_shop_b_0123456789';

beforeEach(async () => {
  db = dbFixture();
  shopA = await startSandboxWorld();
  shopB = await prepareSandboxWorld(shopA.url, async () => {});
  dir = mkdtempSync(join(tmpdir(), 'postback-worker-keys-'));
  keysFile = join(dir, 'keys.json');
});
afterEach(async () => {
  await shopA?.close();
  db.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Queues `n` confirmations of `account`, with clicks of that account's campaign. */
async function enqueue(world: SandboxWorld, account: string, n: number): Promise<void> {
  const clicks = await world.clicks(n);
  const outbox = db.open();
  for (const [i, click] of clicks.entries()) {
    await outbox.confirm({
      account,
      orderId: `${account}-${i}`,
      valueMicros: 1_000 + i,
      click: { token: click.token, clickedAt: click.clickedAt },
    });
  }
  await outbox.close();
}

async function status(): Promise<{ code: number; json: Record<string, unknown>; text: string; err: string }> {
  const io = captureIo();
  const code = await main(['status', '--db', db.file, '--json', '--fail-on-paused'], io);
  const plain = captureIo();
  await main(['status', '--db', db.file], plain);
  return { code, json: JSON.parse(io.out()), text: plain.out(), err: io.err() + plain.err() };
}

const FAST = [
  '--poll-ms',
  '20',
  '--backoff-base-ms',
  '20',
  '--backoff-max-ms',
  '100',
  '--backoff-min-ms',
  '10',
];

describe('postback worker --keys-file (many advertisers)', () => {
  it('a wrong key pauses only its account, status shows it, and fixing the file delivers its jobs without a restart', async () => {
    await enqueue(shopA, 'shop-a', 3);
    await enqueue(shopB, 'shop-b', 3);
    // Readable by its owner only, as the README asks (else the worker warns first).
    writeFileSync(keysFile, JSON.stringify({ 'shop-a': shopA.conversionsKey, 'shop-b': WRONG_KEY }), {
      mode: 0o600,
    });
    // No POSTBACK_API_KEY: with a keys file the worker starts without one.
    const io = captureIo({ env: {} });
    const running = main(
      [
        'worker',
        '--db',
        db.file,
        '--base-url',
        shopA.url,
        '--keys-file',
        keysFile,
        '--auth-pause-ms',
        '300',
        '--log',
        'json',
        ...FAST,
      ],
      io,
    );
    const outputs: string[] = [];
    try {
      await waitUntil(async () => (await shopA.conversions()).conversions.length === 3, 20_000);
      // shop-b is paused, from the worker's heart-beat (beaten at once on a pause), with the reason.
      let paused = await status();
      await waitUntil(async () => {
        paused = await status();
        return (paused.json.pausedAccounts as unknown[] | null)?.length === 1;
      }, 10_000);
      outputs.push(paused.text, JSON.stringify(paused.json), paused.err);
      expect(paused.code).toBe(STATUS_EXIT.paused);
      expect(paused.json.alerts).toEqual(['accounts-paused']);
      expect(paused.json.paused).toBe(false);
      expect(paused.json.pausedAccounts).toEqual([
        expect.objectContaining({ account: 'shop-b', status: 401, reason: expect.stringMatching(/401/) }),
      ]);
      expect(paused.text).toMatch(
        /\npaused accounts \(1; their jobs wait, the others deliver\):\n {2}shop-b {2}401 {2}auth {2}since .*: .*401/,
      );
      expect(paused.err).toMatch(
        /alert: 1 account\(s\) paused: shop-b \(auth: the key was refused or is missing/,
      );
      expect((await shopB.conversions()).conversions).toHaveLength(0);
      const outbox = db.open();
      expect((await outbox.stats(Date.now())).counts).toMatchObject({ delivered: 3, pending: 3, dead: 0 });
      await outbox.close();

      // The right key, written in place of the wrong one: delivered without a restart.
      writeFileSync(
        keysFile,
        JSON.stringify({ 'shop-a': shopA.conversionsKey, 'shop-b': shopB.conversionsKey }),
      );
      await waitUntil(async () => (await shopB.conversions()).conversions.length === 3, 20_000);
      let after = await status();
      await waitUntil(async () => {
        after = await status();
        return (after.json.pausedAccounts as unknown[] | null)?.length === 0;
      }, 10_000);
      outputs.push(after.text, JSON.stringify(after.json), after.err);
      expect(after.code).toBe(0);
      expect(after.text).toMatch(/\npaused accounts: none\n/);
    } finally {
      io.controller.abort();
    }
    expect(await running).toBe(0);
    const lines = io
      .err()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      msg: 'worker.started',
      apiKey: 'unset',
      accountKeys: 2,
      authPauseMs: 300,
    });
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'account-paused', level: 40, account: 'shop-b', status: 401 }),
    );
    expect(lines.find((l) => l.msg === 'account-paused')?.until).toMatch(/Z$/);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'worker.keys-reloaded', changed: ['shop-b'] }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'account-resumed', level: 30, account: 'shop-b' }),
    );
    const all = [io.out(), io.err(), ...outputs].join('\n');
    for (const key of [shopA.conversionsKey, shopB.conversionsKey, WRONG_KEY]) expect(all).not.toContain(key);
  }, 90_000);

  it('with --drain, exits 4 naming the paused account; keys from POSTBACK_API_KEY__<ACCOUNT> deliver', async () => {
    await enqueue(shopA, 'shop_a', 2);
    await enqueue(shopB, 'shop_b', 2);
    const io = captureIo({
      env: { POSTBACK_API_KEY__shop_a: shopA.conversionsKey, POSTBACK_API_KEY__shop_b: WRONG_KEY },
    });
    const code = await main(['worker', '--db', db.file, '--base-url', shopA.url, '--drain', ...FAST], io);
    expect(code, io.err()).toBe(4);
    expect(io.err()).toMatch(
      /postback worker: 1 account\(s\) paused, their jobs left pending .*"shop_b" \(.*401/,
    );
    expect((await shopA.conversions()).conversions).toHaveLength(2);
    expect(io.out() + io.err()).not.toContain(WRONG_KEY);
    expect(io.out() + io.err()).not.toContain(shopA.conversionsKey);
  }, 60_000);

  it('a keys file that does not parse at start is a usage error (exit 2) that does not quote it', async () => {
    writeFileSync(keysFile, `{"shop-a": "${shopA.conversionsKey}",, }`, { mode: 0o600 });
    const io = captureIo({ env: {} });
    const code = await main(
      ['worker', '--db', db.file, '--base-url', shopA.url, '--keys-file', keysFile],
      io,
    );
    expect(code).toBe(2);
    expect(io.err()).toMatch(/the keys file .*keys\.json is not valid JSON/);
    expect(io.err()).not.toContain(shopA.conversionsKey);
    const none = captureIo({ env: {} });
    expect(await main(['worker', '--db', db.file, '--base-url', shopA.url], none)).toBe(2);
    expect(none.err()).toMatch(/set POSTBACK_API_KEY .*--keys-file/);
  });
});
