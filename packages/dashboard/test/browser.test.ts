/**
 * The dashboard in a real browser (headless Chromium) over a queue the real Dispatcher built against the
 * sandbox with faults injected: delivered jobs, jobs retried after 503s, jobs dead after 404s. The page
 * shows the counts, the deadline chart and the dead-jobs groups; without the token nothing can be
 * replayed; with it, a replay (after the confirmation dialog) makes the jobs pending, and a drain delivers
 * them to the sandbox. With many advertiser accounts, a worker whose key for one account is refused shows
 * that account paused (from its heart-beat), and the job list filters by account.
 */
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@postback/client';
import { createDispatcher, createMemoryOutbox, type Dispatcher } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../../test/e2e/helpers/browser.ts';
import { DAY, HOUR, serveDashboard, TOKEN, tempOutbox } from './fixtures.ts';
import { axeViolations, severe, sidewaysScroll } from './page-checks.ts';

let world: SandboxWorld;
let db: ReturnType<typeof tempOutbox>;
let client: ReturnType<typeof createClient>;
let dispatcher: Dispatcher;
let browser: Browser;
let writable: Awaited<ReturnType<typeof serveDashboard>>;
let readOnly: Awaited<ReturnType<typeof serveDashboard>>;
const clickTokens: string[] = [];
let clicks: Awaited<ReturnType<SandboxWorld['clicks']>>;
let accountsWorker: Dispatcher | undefined;

beforeAll(async () => {
  world = await startSandboxWorld();
  db = tempOutbox();
  client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
  // A long backoff: a job that met a 503 stays pending while the test looks.
  dispatcher = createDispatcher({
    outbox: db.outbox,
    client,
    backoff: { baseMs: 3_600_000, maxMs: 3_600_000, minMs: 3_600_000 },
  });
  clicks = await world.clicks(10);
  let next = 0;
  const confirm = async (orderId: string) => {
    const click = clicks[next++];
    if (click === undefined) throw new Error('not enough clicks');
    clickTokens.push(click.token);
    await db.outbox.confirm({ orderId, valueMicros: 5_000_000, click });
  };
  for (const id of ['ok-1', 'ok-2', 'ok-3']) await confirm(id);
  await dispatcher.drain();
  await world.setFaults({ fail_next: 2, error_status: 404 });
  for (const id of ['lost-1', 'lost-2']) await confirm(id);
  await dispatcher.drain();
  await world.setFaults({ fail_next: 2, error_status: 503 });
  for (const id of ['busy-1', 'busy-2']) await confirm(id);
  await dispatcher.drain();
  await world.clearFaults();
  // A click the service never saw: a 404 of its own reason.
  await db.outbox.confirm({
    orderId: 'unknown-click',
    valueMicros: 5_000_000,
    click: { token: 'never-clicked-0000000000', clickedAt: Date.now() - HOUR },
  });
  await dispatcher.drain();
  // Its window closes in about 5 hours: at risk (queued last, so it is not sent before the page looks).
  await db.outbox.confirm({
    orderId: 'closing-soon',
    valueMicros: 5_000_000,
    click: { token: 'closing-soon-00000000000', clickedAt: Date.now() - 7 * DAY + 5 * HOUR },
  });
  writable = await serveDashboard({ outbox: db.outbox, token: TOKEN }, 'express');
  readOnly = await serveDashboard({ outbox: db.outbox });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await accountsWorker?.stop({ timeoutMs: 2_000 });
  await writable?.close();
  await readOnly?.close();
  await dispatcher?.stop({ timeoutMs: 2_000 });
  await client?.close();
  await world?.close();
  await db?.cleanup();
});

/** Opens the dashboard and waits for its overview to be drawn. */
async function open(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(url);
  await page.waitForSelector('body[data-view="/"]');
  expect(errors).toEqual([]); // a CSP violation would be reported here
  return page;
}

const replayFromPage = (page: Page, authorization?: string) =>
  page.evaluate(async (auth) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (auth !== undefined) headers.authorization = auth;
    const res = await fetch('api/replay', { method: 'POST', headers, body: JSON.stringify({ ids: ['x'] }) });
    return res.status;
  }, authorization);

describe('the dashboard in a browser', () => {
  it('shows the counts, the deadline chart with the at-risk job, and the dead jobs by reason', async () => {
    const page = await open(writable.url);
    const count = (state: string) => page.textContent(`[data-state="${state}"] .n`);
    expect(await count('delivered')).toBe('3');
    expect(await count('dead')).toBe('3');
    expect(await count('pending')).toBe('3');
    expect(await page.textContent('#at-risk')).toMatch(/^1 open job at risk/);
    const bars = await page.$$eval('#deadline-chart rect', (rects) =>
      rects.map((r) => ({ count: r.getAttribute('data-count'), risk: r.classList.contains('at-risk') })),
    );
    expect(bars).toHaveLength(6);
    expect(bars.filter((b) => b.risk && b.count === '1')).toHaveLength(1);
    const groups = await page.$$eval('#dead-groups tr.dead-group', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent)),
    );
    expect(groups).toHaveLength(2);
    expect(groups.map((g) => [g[0], g[2]])).toEqual([
      ['404', '2'],
      ['404', '1'],
    ]);
    const html = await page.content();
    for (const token of clickTokens) expect(html).not.toContain(token);

    const dir = mkdtempSync(join(tmpdir(), 'postback-dashboard-shot-'));
    const file = join(dir, 'overview.png');
    await page.screenshot({ path: file, fullPage: true });
    const png = await readFile(file);
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    for (const selector of ['#counts', '#deadline-chart', '#at-risk', '#dead-groups', 'header']) {
      const box = await page.locator(selector).boundingBox();
      expect(box, selector).not.toBeNull();
      if (box === null) continue;
      expect(box.width * box.height, selector).toBeGreaterThan(0);
      expect(box.x + box.width, selector).toBeLessThanOrEqual(width);
      expect(box.y + box.height, selector).toBeLessThanOrEqual(height);
    }

    // A group's "list" shows its jobs.
    await page.locator('#dead-groups tr.dead-group').first().locator('a').click();
    await page.waitForSelector('body[data-view="/jobs"] #job-list');
    const orders = await page.$$eval('#job-list tr.job td:nth-child(3)', (tds) =>
      tds.map((td) => td.textContent),
    );
    expect(orders.sort()).toEqual(['lost-1', 'lost-2']);
    await page.close();
  });

  it('offers no replay without the token, and the server refuses one (403)', async () => {
    const ro = await open(readOnly.url);
    expect(await ro.textContent('#read-only')).toBe('read-only');
    expect(await ro.locator('button.replay').count()).toBe(0);
    expect(await replayFromPage(ro, `Bearer ${TOKEN}`)).toBe(403);
    await ro.close();

    const page = await open(writable.url);
    expect(await page.locator('#token').count()).toBe(1);
    expect(await page.locator('button.replay').count()).toBe(0);
    expect(await replayFromPage(page)).toBe(403);
    await page.fill('#token', 'not-the-token-at-all-0000');
    await page.click('#access button[type=submit]');
    await page.waitForSelector('#access .muted:text("a valid token is needed")');
    expect(await page.locator('button.replay').count()).toBe(0);
    await page.close();
  });

  it('replays a dead-jobs group after the confirmation, and a drain delivers them to the sandbox', async () => {
    const page = await open(writable.url);
    await page.fill('#token', TOKEN);
    await page.click('#access button[type=submit]');
    await page.waitForSelector('#dead-groups button.replay');
    const group = page.locator('#dead-groups tr.dead-group').first();

    page.once('dialog', (dialog) => dialog.dismiss());
    await group.locator('button.replay').click();
    expect((await db.outbox.getByOrder('lost-1'))[0]?.state).toBe('dead');

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await group.locator('button.replay').click();
    await page.waitForSelector('.message:text("Replayed 2 jobs.")');
    expect(asked).toMatch(/^Replay the 2 dead jobs of this group\?$/);
    expect((await db.outbox.getByOrder('lost-1'))[0]?.state).toBe('pending');
    expect(await page.textContent('[data-state="dead"] .n')).toBe('1');

    await dispatcher.drain();
    const seen = (await world.conversions()).conversions.map((c) => c.order_id);
    expect(seen).toEqual(expect.arrayContaining(['lost-1', 'lost-2']));

    // The job's page: every attempt, the 404 and then the delivery; the click token shortened.
    const [job] = await db.outbox.getByOrder('lost-1');
    await page.goto(`${writable.url}#/job/${encodeURIComponent(job?.id ?? '')}`);
    await page.waitForSelector('body[data-view^="/job/"] #attempts');
    const outcomes = await page.$$eval('#attempts tr.attempt', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].slice(2, 4).map((td) => td.textContent)),
    );
    expect(outcomes.map(([outcome]) => outcome)).toEqual(['permanent', 'delivered']);
    expect(outcomes[0]?.[1]).toBe('404');
    const html = await page.content();
    expect(html).toContain(`${clickTokens[3]?.slice(0, 6)}…`);
    for (const token of [...clickTokens, TOKEN]) expect(html).not.toContain(token);
    await page.close();
  });

  it('shows a paused account from the heart-beats, and filters the job list by account', async () => {
    const revokedKey = 'revoked-key-of-shop-b-0123456789';
    // A second worker with a key per account: shop-b's key is refused, so only shop-b pauses.
    accountsWorker = createDispatcher({
      outbox: db.outbox,
      client,
      apiKeyFor: (account) => (account === 'shop-b' ? revokedKey : world.conversionsKey),
      authPauseMs: 3_600_000,
      pollIntervalMs: 20,
      worker: { id: 'worker-accounts' },
    });
    const confirmFor = async (orderId: string, account: string, n: number) => {
      const click = clicks[n];
      if (click === undefined) throw new Error('not enough clicks');
      clickTokens.push(click.token);
      await db.outbox.confirm({ orderId, valueMicros: 5_000_000, click, account });
    };
    await confirmFor('shop-a-1', 'shop-a', 7);
    await confirmFor('shop-b-1', 'shop-b', 8);
    await confirmFor('shop-b-2', 'shop-b', 9);
    const paused = new Promise((resolve) => accountsWorker?.on('account-paused', resolve));
    accountsWorker.start();
    await paused;
    await expect
      .poll(async () => (await db.outbox.getByOrder('shop-a-1', 'shop-a'))[0]?.state, { timeout: 10_000 })
      .toBe('delivered');
    await expect
      .poll(async () => {
        const beats = await db.outbox.workers({ now: Date.now(), sinceMs: 60_000 });
        return beats.find((b) => b.workerId === 'worker-accounts')?.pausedAccounts.length;
      })
      .toBe(1);

    const page = await open(readOnly.url);
    const row = page.locator('#paused-accounts tr.paused-account');
    expect(await row.count()).toBe(1);
    const cells = await row.locator('td').allTextContents();
    expect(cells[0]).toBe('shop-b');
    expect(cells[1]).toBe('401');
    expect(cells[2]).not.toBe('');
    expect(cells[4]).toMatch(/^in (59m|60m|1h)/); // the next probe, an hour after the pause
    expect(await page.textContent('#workers')).toContain('worker-accounts — running, 1 account paused');
    expect(await page.content()).not.toContain(revokedKey);
    expect(severe(await axeViolations(page))).toEqual([]);
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await sidewaysScroll(page)).toBe(0);
    await page.setViewportSize({ width: 1200, height: 1000 });

    // The paused account's link lists its waiting jobs.
    await row.locator('a').click();
    await page.waitForSelector('body[data-view="/jobs"] #job-list');
    const listed = () =>
      page.$$eval('#job-list tr.job', (rows) =>
        rows.map((r) => [...r.querySelectorAll('td')].slice(2, 4).map((td) => td.textContent)),
      );
    expect((await listed()).sort()).toEqual([
      ['shop-b-1', 'shop-b'],
      ['shop-b-2', 'shop-b'],
    ]);
    expect(await page.inputValue('#filter-account')).toBe('shop-b');

    // The filter field: another account, typed in the page.
    await page.fill('#filter-account', 'shop-a');
    await page.selectOption('#filters select[name="state"]', []);
    await page.click('#filters button[type=submit]');
    await page.waitForFunction(() => location.hash.includes('account=shop-a'));
    await page.waitForSelector('#job-list tr.job td:text("shop-a-1")');
    expect(await listed()).toEqual([['shop-a-1', 'shop-a']]);

    // Only jobs without an account: none of the shops' jobs.
    await page.check('#filter-no-account');
    await page.click('#filters button[type=submit]');
    await page.waitForFunction(() => location.hash.includes('noAccount=1'));
    await page.waitForSelector('#job-list tr.job td:text("ok-1")');
    const none = await listed();
    expect(none.length).toBeGreaterThan(5);
    for (const [, account] of none) expect(account).toBe('(no account)');

    // The job page names its account.
    const [job] = await db.outbox.getByOrder('shop-b-1', 'shop-b');
    await page.goto(`${readOnly.url}#/job/${encodeURIComponent(job?.id ?? '')}`);
    await page.waitForSelector('body[data-view^="/job/"] dl.fields');
    expect(await page.textContent('dl.fields')).toContain('shop-b');
    await page.close();
  });

  it('shows jobs held for a campaign not on s2s in a held panel, one row per campaign, axe-clean', async () => {
    const held = tempOutbox();
    const served = await serveDashboard({ outbox: held.outbox });
    try {
      for (const n of [1, 2]) {
        await held.outbox.confirm({
          orderId: `pixel-${n}`,
          account: 'shop-a',
          valueMicros: 5_000_000,
          click: { token: `pixel-click-${n}-000000000000`, clickedAt: Date.now() - HOUR },
        });
      }
      const now = Date.now();
      const error = 'Ad service answered 422: campaign cmp_pix is not on s2s: its conversion source is pixel';
      for (const job of await held.outbox.claim({ now, limit: 10, leaseMs: 60_000 })) {
        const hold = { campaignId: 'cmp_pix' };
        expect(await held.outbox.retry(job, { now, nextAttemptAt: now + HOUR, error, hold })).toBe(true);
      }
      const page = await open(served.url);
      const row = page.locator('#held tr.held-problem');
      expect(await row.count()).toBe(1);
      const cells = await row.locator('td').allTextContents();
      expect(cells.slice(0, 4)).toEqual(['cmp_pix', 'shop-a', '2', '10.00']);
      expect(cells[5]).toContain('is not on s2s');
      expect(await page.textContent('#held h2')).toBe('Held: campaign not on s2s (2 jobs)');
      expect(severe(await axeViolations(page))).toEqual([]);
      await page.setViewportSize({ width: 390, height: 800 });
      expect(await sidewaysScroll(page)).toBe(0);
      await page.close();
    } finally {
      await served.close();
      await held.cleanup();
    }
  });

  it('drops the orders of a held problem awaiting a decision after the confirmation, axe-clean', async () => {
    const outbox = createMemoryOutbox();
    for (const n of [1, 2]) {
      const click = { token: `switched-click-${n}-0000000000`, clickedAt: Date.now() - HOUR };
      await outbox.confirm({ orderId: `switched-${n}`, account: 'shop-a', valueMicros: 5_000_000, click });
    }
    const now = Date.now();
    const error = 'Ad service answered 422: campaign cmp_pix is not on s2s: its conversion source is pixel';
    for (const job of await outbox.claim({ now, limit: 10, leaseMs: 60_000 }))
      await outbox.retry(job, { now, nextAttemptAt: now + HOUR, error, hold: { campaignId: 'cmp_pix' } });
    await outbox.switches?.note({ account: 'shop-a', campaignId: 'cmp_pix', at: now - 60_000 });
    const served = await serveDashboard({ outbox, token: TOKEN, tokenName: 'ana' });
    try {
      const page = await open(served.url);
      const line = page.locator('#held li.held-decision');
      expect(await line.textContent()).toMatch(
        /^cmp_pix \(shop-a\): switch to s2s seen \S+ ago: awaiting a decision \(the pixel may have billed these orders\)\. 2 orders, value 10\.00, earliest deadline in/,
      );
      expect(await line.locator('button').count()).toBe(0);
      await page.fill('#token', TOKEN);
      await page.click('#access button[type=submit]');
      await page.waitForSelector('#held button.held-drop');
      expect(severe(await axeViolations(page))).toEqual([]);

      page.once('dialog', (dialog) => dialog.dismiss());
      await line.locator('button.held-drop').click();
      expect((await outbox.getByOrder('switched-1', 'shop-a'))[0]?.state).toBe('pending');

      let asked = '';
      page.once('dialog', (dialog) => {
        asked = dialog.message();
        void dialog.accept();
      });
      await line.locator('button.held-drop').click();
      await page.waitForSelector('.message:text("Decided 2 orders: 0 sent now, 2 dropped")');
      expect(asked).toMatch(/^Drop the 2 held orders of campaign cmp_pix \(account shop-a\)\?/);
      expect(await page.locator('#held').count()).toBe(0);
      expect((await outbox.getByOrder('switched-1', 'shop-a'))[0]?.state).toBe('cancelled');
      const rows = (await outbox.readLedger()).filter((row) => row.kind === 'held-drop');
      expect(rows.map((row) => row.actor)).toEqual(['ana', 'ana']);
      expect(severe(await axeViolations(page))).toEqual([]);
      await page.close();
    } finally {
      await served.close();
    }
  });
});
