/**
 * The switch-over from pixel to s2s never bills an order twice and never drops one no path billed (issue
 * 31), over real HTTP against the sandbox on its movable clock, a real SQLite file, and the CLI in process:
 * 20 orders of a campaign on pixel are held (the sandbox refuses them: not on s2s); on day 3 the
 * advertiser switches the campaign; an order created after the switch is sent at once and shows the
 * switch. At the default `onSwitch: 'ask'` none of the 20 is sent: `postback status` alerts
 * `held-awaiting-decision` once, and `postback held drop` (the pixel billed them) ends them with a ledger
 * row each, or `postback held send` (no pixel) has each applied once inside its window. The verdict is the
 * sandbox's own record of charges.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@postback/client';
import { createDispatcher } from '@postback/core';
import { type RunningSandbox, startSandbox } from '@postback/sandbox';
import { createSqliteOutbox } from '@postback/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import type { Command } from '../packages/cli/src/command.ts';
import { createHeldCommand } from '../packages/cli/src/commands/held.ts';
import { createLedgerCommand } from '../packages/cli/src/commands/ledger.ts';
import { createStatusCommand } from '../packages/cli/src/commands/status.ts';
import { defaultContext } from '../packages/cli/src/context.ts';
import { capturedIo } from './helpers/captured-io.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HELD = 20;
const BID = 1_000_000;
const VALUE = 30_000_000;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs a CLI command in process on the sandbox's clock: its exit code, stdout and stderr. */
async function cli(
  sandbox: RunningSandbox,
  make: (ctx: typeof defaultContext) => Command,
  args: string[],
  env: Record<string, string> = {},
) {
  const captured = capturedIo(env);
  const code = await make({ ...defaultContext, now: sandbox.now }).run(args, captured.io);
  return { code, out: captured.out(), err: captured.err() };
}

/**
 * The run of the issue: 20 orders held while the campaign is on pixel (billed by the pixel when `pixel`),
 * the switch on day 3, an order after it. Returns what the checks need.
 */
async function switchOverRun(pixel: boolean) {
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  const dir = mkdtempSync(join(tmpdir(), 'postback-switch-'));
  dirs.push(dir);
  const file = join(dir, 'outbox.db');
  const { account_id, keys } = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
  const ads = createClient({ baseUrl: sandbox.url, apiKey: keys.all });
  const client = createClient({ baseUrl: sandbox.url, apiKey: keys.conversions, timeout: 5_000 });
  const outbox = createSqliteOutbox({ filename: file, now: sandbox.now });
  const campaign = await ads.campaigns.create({
    name: 'Shoes',
    pricing_model: 'cpa',
    bid_micros: BID,
    total_budget_micros: 100_000_000,
    conversion_source: 's2s',
    creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://shop.example/' }],
  });
  await sandbox.control.setConversionSource(campaign.id, 'pixel');
  // Default options: onSwitch 'ask'.
  const dispatcher = createDispatcher({ outbox, client, now: sandbox.now, concurrency: 2 });
  const order = async (orderId: string) => {
    const click = await sandbox.control.click(campaign.id);
    await outbox.confirm({
      orderId,
      valueMicros: VALUE,
      click: { token: click.click_token, clickedAt: Date.parse(click.clicked_at) },
    });
    return click;
  };
  const readEnv = { POSTBACK_API_KEY: keys.read };
  const db = ['--db', file];
  const held: string[] = [];
  for (let i = 0; i < HELD; i++) {
    sandbox.advance((2.5 * DAY) / HELD);
    const orderId = `held_${i}`;
    const click = await order(orderId);
    if (pixel) {
      const fired = await sandbox.control.firePixel({ click_token: click.click_token, order_id: orderId });
      expect(fired).toMatchObject({ billed: true, charged_micros: BID });
    }
    held.push(orderId);
    expect(await dispatcher.drain()).toMatchObject({ held: 1, delivered: 0 });
    // A reading of the campaign's spend early on: the hold's start in `postback held`.
    if (i === 0)
      expect((await cli(sandbox, createHeldCommand, [...db, '--base-url', sandbox.url], readEnv)).code).toBe(
        0,
      );
  }
  // Day 3: the advertiser switches the campaign to s2s; an order created after it is sent at once.
  sandbox.advance(12 * HOUR);
  const switchedAt = sandbox.now();
  await sandbox.control.setConversionSource(campaign.id, 's2s');
  sandbox.advance(HOUR);
  await order('after_1');
  expect(await dispatcher.drain()).toMatchObject({ delivered: 1, held: 0 });
  // Hours pass with the worker polling: nothing of the held orders is sent without a decision.
  for (let h = 0; h < 6; h++) {
    sandbox.advance(HOUR);
    await dispatcher.drain();
  }
  return {
    sandbox,
    account_id,
    keys,
    ads,
    client,
    outbox,
    dispatcher,
    campaign,
    db,
    readEnv,
    held,
    switchedAt,
    order,
  };
}

/** Requests the sandbox got for the held orders after the switch (none may come without a decision). */
async function heldRequestsAfter(run: Awaited<ReturnType<typeof switchOverRun>>) {
  const { requests } = await run.sandbox.control.requests({ accountId: run.account_id, key: 'conversions' });
  return requests.filter(
    (r) => Date.parse(r.at) >= run.switchedAt && run.held.some((id) => JSON.stringify(r).includes(`"${id}"`)),
  );
}

async function close(run: Awaited<ReturnType<typeof switchOverRun>>) {
  await run.dispatcher.stop();
  await run.outbox.close();
  await run.client.close();
  await run.ads.close();
  await run.sandbox.close();
}

describe('the switch-over from pixel to s2s', () => {
  it('(a)+(c) pixel billed 20 orders: none is sent, one alert, held drop ends them with a ledger row each; later orders go', async () => {
    const run = await switchOverRun(true);
    try {
      const { sandbox, db } = run;
      expect(await heldRequestsAfter(run)).toEqual([]);
      const charged = (await sandbox.control.conversions(run.account_id)).conversions;
      expect(charged.map((c) => c.order_id)).toEqual(['after_1']);

      // One alert, naming the value at risk and the earliest deadline.
      const status = await cli(sandbox, createStatusCommand, [...db, '--json', '--fail-on-paused']);
      expect(JSON.parse(status.out).alerts).toContain('held-awaiting-decision');
      const alertLines = status.err.split('\n').filter((l) => l.includes('await a decision'));
      expect(alertLines).toHaveLength(1);
      expect(alertLines[0]).toContain(`${HELD} held order(s) worth ${((HELD * VALUE) / 1e6).toFixed(2)}`);
      expect(alertLines[0]).toMatch(/earliest deadline \d{4}-/);

      // `postback held` shows the pixel's billing meanwhile: the campaign's spend rose by the 20 bids.
      const listed = await cli(
        sandbox,
        createHeldCommand,
        [...db, '--base-url', sandbox.url, '--json'],
        run.readEnv,
      );
      const [problem] = JSON.parse(listed.out).problems;
      expect(problem).toMatchObject({ campaignId: run.campaign.id, count: HELD, awaitingDecision: true });
      expect(problem.spend.now.spendMicros - problem.spend.atHold.spendMicros).toBe((HELD - 1) * BID + BID);
      expect(listed.out).not.toContain(run.keys.read);

      const dropped = await cli(sandbox, createHeldCommand, [
        'drop',
        ...db,
        '--no-account',
        '--campaign',
        run.campaign.id,
        '--as',
        'ana',
      ]);
      expect(dropped.out).toContain(`held drop: ${HELD} order(s): 0 due now, ${HELD} dropped, 0 expired`);
      const ledger = JSON.parse((await cli(sandbox, createLedgerCommand, [...db, '--json'])).out).rows;
      const drops = ledger.filter((r: { kind: string }) => r.kind === 'held-drop');
      expect(drops.map((r: { orderId: string; actor: string }) => `${r.orderId}:${r.actor}`).sort()).toEqual(
        run.held.map((id) => `${id}:ana`).sort(),
      );
      // (c) An order after the decision goes at once too; nothing of the 20 ever reaches the service.
      await run.order('after_2');
      expect(await run.dispatcher.drain()).toMatchObject({ delivered: 1 });
      sandbox.advance(8 * DAY);
      await run.dispatcher.drain();
      expect(await heldRequestsAfter(run)).toEqual([]);
      const final = await sandbox.control.conversions(run.account_id);
      expect(final.conversions.map((c) => c.order_id).sort()).toEqual(['after_1', 'after_2']);
      const status2 = await cli(sandbox, createStatusCommand, [...db, '--json', '--fail-on-paused']);
      expect(JSON.parse(status2.out).alerts).not.toContain('held-awaiting-decision');
    } finally {
      await close(run);
    }
  }, 120_000);

  it('(b) no pixel: held send has each of the 20 applied once, inside its window', async () => {
    const run = await switchOverRun(false);
    try {
      const { sandbox, db } = run;
      expect(await heldRequestsAfter(run)).toEqual([]);
      const sent = await cli(sandbox, createHeldCommand, [
        'send',
        ...db,
        '--no-account',
        '--campaign',
        run.campaign.id,
      ]);
      expect(sent.out).toContain(`held send: ${HELD} order(s): ${HELD} due now, 0 dropped, 0 expired`);
      expect(await run.dispatcher.drain()).toMatchObject({ delivered: HELD, held: 0 });
      await run.dispatcher.drain();
      const { conversions, counts } = await sandbox.control.conversions(run.account_id);
      const ids = conversions.map((c) => c.order_id);
      expect(ids.filter((id) => id.startsWith('held_')).sort()).toEqual([...run.held].sort());
      expect(new Set(ids).size).toBe(ids.length);
      expect(conversions.every((c) => c.state === 'confirmed' && c.charged_micros === BID)).toBe(true);
      expect(counts.late).toBe(0);
      expect(counts.duplicates).toBe(0);
      const ledger = JSON.parse((await cli(sandbox, createLedgerCommand, [...db, '--json'])).out).rows;
      expect(ledger.filter((r: { kind: string }) => r.kind === 'held-send')).toHaveLength(HELD);
      expect(ledger.filter((r: { kind: string }) => r.kind === 'applied')).toHaveLength(HELD + 1);
    } finally {
      await close(run);
    }
  }, 120_000);
});
