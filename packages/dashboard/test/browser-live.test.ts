/**
 * The dashboard as an operator watches it, in headless Chromium: it warns when open jobs wait and no
 * worker delivers them; it redraws itself, so jobs are seen moving when a worker starts (and not while
 * the refresh is paused); a group's purge and "select all N shown" act on exactly the jobs the page
 * listed, not on jobs that died after it was drawn; and every view passes axe-core without a serious or
 * critical violation and fits a 390 px wide phone without a sideways scroll.
 */
import { createClient } from '@postback/client';
import { createDispatcher, type Dispatcher } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../../test/e2e/helpers/browser.ts';
import { deadJobs, serveDashboard, TOKEN, tempOutbox } from './fixtures.ts';
import { axeViolations, severe, sidewaysScroll } from './page-checks.ts';

const REFRESH_MS = 400;
const REASON = 'no click with this token (request req_1234)';
let world: SandboxWorld;
let db: ReturnType<typeof tempOutbox>;
let client: ReturnType<typeof createClient>;
let worker: Dispatcher | undefined;
let browser: Browser;
let served: Awaited<ReturnType<typeof serveDashboard>>;

beforeAll(async () => {
  world = await startSandboxWorld();
  db = tempOutbox();
  client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
  served = await serveDashboard({ outbox: db.outbox, token: TOKEN, refreshMs: REFRESH_MS });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop({ timeoutMs: 2_000 });
  await served?.close();
  await client?.close();
  await world?.close();
  await db?.cleanup();
});

async function open(width = 1200): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(served.url)) errors.push(`a request off the origin: ${r.url()}`);
  });
  await page.goto(served.url);
  await page.waitForSelector('body[data-view="/"]');
  expect(errors).toEqual([]);
  return page;
}

async function unlock(page: Page): Promise<void> {
  await page.fill('#token', TOKEN);
  await page.click('#access button[type=submit]');
  await page.waitForSelector('#access button:text("Lock")');
}

async function pause(page: Page): Promise<void> {
  await page.click('#refresh-toggle');
  await page.waitForSelector('#refresh-toggle[aria-pressed="true"]');
}

/** Navigates the page (same document: the token stays) and waits for the view to be drawn anew. */
async function go(page: Page, view: string): Promise<void> {
  const before = await page.evaluate(() => document.body.dataset.refreshedAt);
  await page.goto(`${served.url}${view}`);
  await page.waitForFunction(
    ([path, drawn]) => document.body.dataset.view === path && document.body.dataset.refreshedAt !== drawn,
    [view.replace(/^#/, '').split('?')[0] || '/', before] as const,
  );
}

const shown = (page: Page, state: string) => page.textContent(`[data-state="${state}"] .n`);

describe('the live dashboard', () => {
  it('warns that no worker delivers while jobs wait, then sees the jobs move on its own when one starts', async () => {
    for (const click of await world.clicks(5)) {
      await db.outbox.confirm({ orderId: `live-${click.token.slice(-6)}`, valueMicros: 1_000, click });
    }
    const page = await open();
    expect(await page.textContent('#no-worker')).toMatch(
      /5 open jobs wait, and no worker has reported in the last 2m/,
    );
    await page.evaluate(() => {
      (window as unknown as { sameDocument: boolean }).sameDocument = true;
    });

    worker = createDispatcher({
      outbox: db.outbox,
      client,
      pollIntervalMs: 20,
      worker: { id: 'worker-live' },
    });
    worker.start();
    await page.waitForFunction(
      () => document.querySelector('[data-state="delivered"] .n')?.textContent === '5',
      null,
      {
        timeout: 20_000,
      },
    );
    await page.waitForSelector('#workers li.live:text("worker-live")');
    expect(await page.locator('#no-worker').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(
      true,
    );
    await page.waitForSelector('#activity-summary .key.delivered:text("5 delivered")', { timeout: 10_000 });
    await worker.stop({ timeoutMs: 2_000 });
    worker = undefined;
    await page.close();
  });

  it('stops redrawing while paused, and goes on when resumed', async () => {
    const page = await open();
    const before = await shown(page, 'pending');
    await pause(page);
    const [click] = await world.clicks(1);
    if (click === undefined) throw new Error('no click');
    await db.outbox.confirm({ orderId: 'while-paused', valueMicros: 1_000, click });
    await page.waitForTimeout(5 * REFRESH_MS);
    expect(await shown(page, 'pending')).toBe(before);
    await page.click('#refresh-toggle');
    await page.waitForFunction(
      (n) => document.querySelector('[data-state="pending"] .n')?.textContent === String(n),
      Number(before) + 1,
      { timeout: 10_000 },
    );
    await page.close();
  });

  it("purges a group's listed jobs only, not the ones that died in other accounts after the page was drawn", async () => {
    const now = Date.now();
    await deadJobs(
      db.outbox,
      ['grp-1', 'grp-2', 'grp-3'].map((orderId) => ({ orderId })),
      REASON,
      now,
    );
    const page = await open();
    await unlock(page);
    await pause(page);
    const group = page.locator('#dead-groups tr.dead-group').first();
    expect(await group.locator('td').nth(2).textContent()).toBe('3');
    const late = Array.from({ length: 20 }, (_, n) => ({ orderId: `late-${n}`, account: `shop-${n % 4}` }));
    await deadJobs(db.outbox, late, REASON, now);

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await group.locator('button.purge').click();
    await page.waitForSelector('.message:text("Deleted 3 jobs.")');
    expect(asked).toBe('Delete the 3 dead jobs of this group?');
    expect(await db.outbox.getByOrder('grp-1')).toEqual([]);
    for (const { orderId, account } of late) {
      expect((await db.outbox.getByOrder(orderId, account))[0]?.state, orderId).toBe('dead');
    }
    await page.close();
  });

  it('replays "all N shown" of a list: those rows, not a job that died after', async () => {
    const page = await open();
    await unlock(page);
    await pause(page);
    await go(page, '#/jobs?state=dead&limit=200');
    expect(await page.textContent('#selection label')).toBe('Select all 20 shown');
    await page.check('#select-all');
    expect(await page.locator('input.select-job:checked').count()).toBe(20);
    await deadJobs(db.outbox, [{ orderId: 'died-after' }], REASON, Date.now());
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.click('#selection button.replay-selected');
    await page.waitForSelector('.message:text("Replayed 20 jobs.")');
    expect(asked).toBe('Replay the 20 selected dead jobs?');
    expect((await db.outbox.getByOrder('died-after'))[0]?.state).toBe('dead');
    expect((await db.outbox.stats(Date.now())).counts.dead).toBe(1);
    await page.close();
  });

  it('with reads behind the token, shows no job until the token is pasted, then the queue', async () => {
    const locked = await serveDashboard({
      outbox: db.outbox,
      token: TOKEN,
      tokenForReads: true,
      refreshMs: REFRESH_MS,
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(locked.url);
      await page.waitForSelector('body[data-view="locked"]');
      expect(await page.textContent('#view')).toMatch(/only with its token/);
      expect(await page.locator('[data-state]').count()).toBe(0);
      await page.fill('#token', TOKEN);
      await page.click('#access button[type=submit]');
      await page.waitForSelector('body[data-view="/"] [data-state="delivered"]');
      expect(await shown(page, 'dead')).toBe(String((await db.outbox.stats(Date.now())).counts.dead));
      await page.waitForSelector('#refresh-toggle');
      // Locked again: the view empties, and the refresh leaves the token field alone while it is typed in.
      await page.click('#access button:text("Lock")');
      await page.waitForSelector('body[data-view="locked"]');
      await page.fill('#token', 'half-typed');
      await page.waitForTimeout(4 * REFRESH_MS);
      expect(await page.inputValue('#token')).toBe('half-typed');
      expect(await page.locator('[data-state]').count()).toBe(0);
      await page.close();
    } finally {
      await locked.close();
    }
  });

  it('passes axe-core with no serious or critical violation and has no sideways scroll at 390 px', async () => {
    // Something in every section: dead groups, a paused worker's account is covered in browser.test.ts.
    await deadJobs(
      db.outbox,
      [{ orderId: 'axe-1' }, { orderId: 'axe-2', account: 'shop-with-a-long-name-0123456789' }],
      REASON,
      Date.now(),
    );
    const [job] = await db.outbox.getByOrder('axe-1');
    for (const width of [1200, 390]) {
      const page = await open(width);
      await unlock(page);
      const views = ['#/', '#/jobs?state=dead', '#/jobs', `#/job/${encodeURIComponent(job?.id ?? '')}`];
      for (const view of views) {
        await go(page, view);
        const violations = await axeViolations(page);
        expect(severe(violations), `${view} at ${width}px`).toEqual([]);
        expect(
          violations.map((v) => v.id),
          `${view} at ${width}px`,
        ).not.toContain('empty-table-header');
        expect(await sidewaysScroll(page), `${view} at ${width}px`).toBe(0);
      }
      await page.close();
    }
  });
});
