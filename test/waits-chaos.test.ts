/**
 * Every wait at once (issue 30): eight days on the sandbox's movable clock, over real HTTP, once with a
 * SQLite outbox and once with the Postgres one. Two advertiser accounts (keys by `apiKeyFor`), one
 * Dispatcher on the sandbox clock, time advanced in steps. Together: 5xx, resets and lost answers all
 * along; 429 bursts whose `Retry-After` runs from 1 s to a year; a campaign on pixel whose orders are
 * held until it is switched to s2s on day 3; near their deadlines, orders whose first try meets a 503, a
 * 503 with a `Retry-After` of an hour, a timeout or a reset; an outage over the last hour of some windows;
 * orders whose id was confirmed before with another value (a 409); order ids holding the words the
 * kit's patterns look for; and a busy host for the adaptive pace.
 *
 * The verdict comes from the sandbox's own records (its conversions and request log), never from the
 * client's schemas: each promise is its own assertion (soft: all are checked, each failure names its
 * orders, states and reasons). The seed of a run is printed; `CHAOS_SEED=<seed>` repeats it.
 */
import { createClient } from '@postback/client';
import { createDispatcher, type Job } from '@postback/core';
import { type SandboxConversion, type SandboxFaults, startSandbox } from '@postback/sandbox';
import { prepareSandboxWorld, type SandboxWorld } from '@postback/sandbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createBusyHost } from './helpers/busy-host.ts';
import { type ChaosOrder, describeOrder, orderKey } from './helpers/chaos-orders.ts';
import { CHAOS_STORES, openChaosStore } from './helpers/chaos-stores.ts';
import { createFaultTimeline } from './helpers/fault-timeline.ts';
import { pixelHeldOrderProblems } from './helpers/pixel-held-expectation.ts';
import { chaosSeed, seeded } from './helpers/seeded-random.ts';
import { createSimAgenda } from './helpers/sim-agenda.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Simulated time of the run. */
const RUN_MS = 8 * DAY + HOUR;
/** A step of the clock; `FINE_STEP_MS` around the moments that matter (bursts, near-deadline tries). */
const STEP_MS = 30 * MIN;
const FINE_STEP_MS = 2 * MIN;
/** Real time a step waits at most for the Dispatcher to give back every job it claimed. */
const SETTLE_LIMIT_MS = 3_000;
/** The whole test's bound (real time), per store. */
const RUN_LIMIT_MS = 150_000;
const HOLD_PROBE_MS = 6 * HOUR;
/** While the run goes on, every this long the open jobs are looked at for any left past its deadline. */
const OVERDUE_CHECK_MS = 6 * HOUR;
/** How late "at once" may be: an expiry waits for a claim, which comes within a step or two. */
const OVERDUE_TOLERANCE_MS = HOUR;
/**
 * An expiry may come this much before its deadline: a last chance that failed may leave no time for
 * another try (the safety margin and the send's expected duration). An expiry days early (a refusal read
 * as a closed window) is what the check is for.
 */
const EARLY_EXPIRY_TOLERANCE_MS = 2 * HOUR;

/** All along until day 6: some 503s, resets before and after the request is applied (lost answers). */
const BACKGROUND: SandboxFaults = {
  error_rate: 0.1,
  error_status: 503,
  reset_rate: 0.03,
  reset_after_rate: 0.05,
};
/** From day 6: only lost answers (the request applied, its answer never arrives). */
const LOST_ANSWERS: SandboxFaults = { reset_after_rate: 0.05 };
/** 429 bursts: day of the burst and its `Retry-After` (1 s to a year). */
const BURSTS = [
  { day: 0.5, retryAfterS: 1 },
  { day: 1.25, retryAfterS: 60 },
  { day: 2, retryAfterS: 3_600 },
  { day: 2.6, retryAfterS: 86_400 },
  { day: 4.125, retryAfterS: 365 * 86_400 },
] as const;
const BURST_MS = 10 * MIN;
/** The first try of each near-deadline kind meets this; every try after it meets a working service. */
const NEAR_DEADLINE_FAULTS: ReadonlyArray<{ kind: string; faults: SandboxFaults }> = [
  { kind: '503', faults: { error_rate: 1, error_status: 503 } },
  { kind: '503 Retry-After 1 h', faults: { error_rate: 1, error_status: 503, retry_after_s: 3_600 } },
  // Latency past the send timeout, then a 503: the request times out and is not applied.
  { kind: 'timeout', faults: { latency_ms: 800, error_rate: 1, error_status: 503 } },
  { kind: 'reset', faults: { reset_rate: 1 } },
];
/** Near-deadline orders are enqueued this long before their deadline. */
const NEAR_DEADLINE_LEAD_MS = 45 * MIN;
/** Words the kit's default patterns look for, put into order ids. */
const PATTERN_WORDS = ['pixel', 'not on s2s', 'expired', 'older than', 'window closed', 'too late'];

type Group =
  | 'steady'
  | `near-deadline: ${string}`
  | 'outage'
  | 'pixel: held before the switch'
  | 'pixel: after the switch'
  | 'conflict (409)';

/** One order of the run. */
interface Order extends ChaosOrder {
  account: 'shop-a' | 'shop-b';
  group: Group;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('every wait answers to the deadline, all faults at once (8 simulated days)', () => {
  for (const storeName of CHAOS_STORES) {
    it(
      `${storeName}: every order whose service was reachable in its window is applied once, and no job outlives its deadline`,
      async () => {
        const started = Date.now();
        const seed = chaosSeed();
        // One stream each for the test's choices, the sandbox's faults and the Dispatcher's jitter.
        const random = seeded(seed);
        const tag = `[waits-chaos ${storeName}, seed ${seed}; repeat with CHAOS_SEED=${seed}]`;
        console.log(`waits-chaos ${storeName}: seed ${seed}`);

        await using sandbox = await startSandbox({ port: 0, host: '127.0.0.1', random: seeded(seed + 1) });
        const control = sandbox.control;
        const now = () => sandbox.now();
        /** The run's start on the sandbox clock; failure messages give times as days after it. */
        const t0 = now();
        const worlds: Record<Order['account'], SandboxWorld> = {
          'shop-a': await prepareSandboxWorld(sandbox.url, async () => {}),
          'shop-b': await prepareSandboxWorld(sandbox.url, async () => {}),
        };
        const a = worlds['shop-a'];
        const b = worlds['shop-b'];
        // Shop A's second campaign still bills by its pixel: the advertiser switches it to s2s on day 3.
        const pixelCampaign = await a.createCampaign('https://shop-a.example/pixel');
        await control.setConversionSource(pixelCampaign, 'pixel');

        const store = await openChaosStore(storeName, now);
        cleanups.push(() => store.close());
        const outbox = store.outbox;
        const client = createClient({ baseUrl: sandbox.url, timeout: 5_000 });
        cleanups.push(() => client.close());
        const keys = new Map([
          ['shop-a', a.conversionsKey],
          ['shop-b', b.conversionsKey],
        ]);
        const dispatcher = createDispatcher({
          outbox,
          client,
          apiKeyFor: (account) => (account === null ? undefined : keys.get(account)),
          now,
          random: seeded(seed + 2),
          concurrency: 8,
          // The simulated clock moves in steps of up to STEP_MS: a job comes due at most a step before a
          // claim sees it, so the claim latency the wait rule must leave before a deadline is that step.
          pollIntervalMs: STEP_MS,
          // Simulated hours: the step loop hands every claimed job back before the clock moves on.
          leaseMs: 6 * HOUR,
          sendTimeoutMs: 300,
          // A worker with long backoffs: a retry would often fall after a near deadline.
          backoff: { baseMs: 4 * HOUR, maxMs: 12 * HOUR, minMs: MIN },
          holdProbeMs: HOLD_PROBE_MS,
          authPauseMs: 10 * MIN,
          pace: 'adaptive',
        });
        cleanups.push(() => dispatcher.stop({ timeoutMs: 5_000 }));
        const expiredEvents = new Map<string, { at: number; reason: string }>();
        const attemptsSeen = new Map<string, number>();
        const pauses: string[] = [];
        const errors: string[] = [];
        dispatcher.on('expired', ({ job, reason }) => void expiredEvents.set(job.id, { at: now(), reason }));
        dispatcher.on(
          'attempt',
          ({ job }) => void attemptsSeen.set(job.id, (attemptsSeen.get(job.id) ?? 0) + 1),
        );
        dispatcher.on('account-paused', ({ account, status, until, cause }) =>
          pauses.push(
            `${account} ${cause} ${status} at ${((now() - t0) / DAY).toFixed(3)}d for ${((until - now()) / HOUR).toFixed(1)} h`,
          ),
        );
        dispatcher.on('paused', ({ status, until, cause }) =>
          pauses.push(
            `all ${cause} ${status} at ${((now() - t0) / DAY).toFixed(3)}d for ${((until - now()) / HOUR).toFixed(1)} h`,
          ),
        );
        dispatcher.on('error', ({ error, during }) => void errors.push(`${during}: ${String(error)}`));

        const timeline = createFaultTimeline((faults) => control.setFaults(faults), now);
        const busy = createBusyHost({ busyMs: 12, everyMs: 20 });
        cleanups.push(async () => busy.stop());

        // ---- the orders ----
        const orders: Order[] = [];
        const pools: Record<string, Array<{ token: string; clickedAt: number }>> = {};
        const worldOf = (account: Order['account']) => worlds[account];
        const click = async (campaignId: string, account: Order['account']) => {
          const c = await worldOf(account).click(campaignId);
          return { token: c.token, clickedAt: c.clickedAt };
        };
        const pickFromPool = (campaignId: string) => {
          const pool = pools[campaignId] ?? [];
          // A shopper who clicked on day 0 or 1 and buys now: the click is always inside its window.
          const fresh = pool.filter((c) => now() - c.clickedAt < 5.5 * DAY);
          return fresh[Math.floor(random() * fresh.length)] as { token: string; clickedAt: number };
        };
        const enqueue = async (
          account: Order['account'],
          campaignId: string,
          orderId: string,
          group: Group,
          c: { token: string; clickedAt: number },
          valueMicros = 1_000 + orders.length,
        ) => {
          const result = await outbox.confirm({ orderId, valueMicros, click: c, account });
          const order: Order = {
            ...{ account, orderId, campaignId, group, token: c.token, clickedAt: c.clickedAt, valueMicros },
            ...{
              enqueuedAt: now(),
              deadline: result.job.deadline as number,
              jobId: result.job.id,
              pixelBilled: false,
            },
          };
          orders.push(order);
          dispatcher.wake();
          return order;
        };
        let n = 0;
        /** Half the order ids hold a word of the kit's patterns (a shop or product named so). */
        const orderIdOf = (prefix: string) => {
          n += 1;
          return n % 2 === 0 ? `${prefix}-${n}` : `${prefix}-${n} ${PATTERN_WORDS[n % PATTERN_WORDS.length]}`;
        };

        // ---- the agenda: what happens when, on the sandbox clock ----
        const agenda = createSimAgenda();
        const at = (offsetMs: number, run: () => Promise<void>) => agenda.at(t0 + offsetMs, run);
        const fineBetween = (from: number, to: number) => agenda.fineBetween(t0 + from, t0 + to);
        const busyWindows: Array<[number, number]> = [[t0 + 0.4 * DAY, t0 + 0.9 * DAY]];

        // Clicks of days 0 and 1, every hour, for every campaign: the orders of later days use them.
        for (let h = 0; h < 48; h++) {
          at(h * HOUR, async () => {
            for (const [campaignId, account] of [
              [a.campaignId, 'shop-a'],
              [b.campaignId, 'shop-b'],
              [pixelCampaign, 'shop-a'],
            ] as const) {
              const pool = pools[campaignId] ?? [];
              pools[campaignId] = pool;
              pool.push(await click(campaignId, account));
            }
          });
        }
        // Steady orders of both shops, every 3 hours until day 5.
        for (let k = 0; k * 3 * HOUR <= 5 * DAY; k++) {
          at(k * 3 * HOUR + MIN, async () => {
            await enqueue('shop-a', a.campaignId, orderIdOf('a'), 'steady', pickFromPool(a.campaignId));
          });
          at(k * 3 * HOUR + 90 * MIN, async () => {
            await enqueue('shop-b', b.campaignId, orderIdOf('b'), 'steady', pickFromPool(b.campaignId));
          });
        }
        // The pixel campaign: orders held until the switch (the pixel billed every other one), then orders
        // after it.
        for (let k = 0; k < 10; k++) {
          at(k * 6 * HOUR + 45 * MIN, async () => {
            const c = pickFromPool(pixelCampaign);
            const order = await enqueue(
              'shop-a',
              pixelCampaign,
              orderIdOf('px'),
              'pixel: held before the switch',
              c,
            );
            if (k % 2 === 0) {
              const fired = await control.firePixel({ click_token: c.token, order_id: order.orderId });
              order.pixelBilled = fired.billed;
            }
          });
        }
        at(3 * DAY, async () => void (await control.setConversionSource(pixelCampaign, 's2s')));
        for (let k = 0; k < 4; k++) {
          at(3 * DAY + k * 12 * HOUR + 30 * MIN, async () => {
            await enqueue(
              'shop-a',
              pixelCampaign,
              orderIdOf('px'),
              'pixel: after the switch',
              pickFromPool(pixelCampaign),
            );
          });
        }
        // Conflicts: an order id confirmed before with another value (by another system of the shop); ours
        // then gets a 409 that echoes the id, which holds pattern words.
        const direct = createClient({ baseUrl: sandbox.url, timeout: 5_000 });
        cleanups.push(() => direct.close());
        const conflicts = PATTERN_WORDS.map((word, i) => ({
          account: (i % 3 === 2 ? 'shop-b' : 'shop-a') as Order['account'],
          orderId: `conflict-${i} ${word}`,
        }));
        const conflictClicks = new Map<string, { token: string; clickedAt: number }>();
        // Before the faults begin: the other system's confirmations went through.
        for (const c of conflicts) {
          const w = worldOf(c.account);
          const k = await click(w.campaignId, c.account);
          conflictClicks.set(orderKey(c), k);
          await direct.conversions.confirm(
            { click_token: k.token, order_id: c.orderId, value_micros: 111 },
            { apiKey: w.conversionsKey },
          );
        }
        // One every 7 hours from day 1, between orders that go through: no run of identical refusals.
        conflicts.forEach((c, i) => {
          at(DAY + i * 7 * HOUR + 20 * MIN, async () => {
            const w = worldOf(c.account);
            await enqueue(
              c.account,
              w.campaignId,
              c.orderId,
              'conflict (409)',
              conflictClicks.get(orderKey(c))!,
              222,
            );
          });
        });
        // Faults: the background, then 429 bursts; from day 6 only lost answers.
        at(0, () => timeline.enter('background', BACKGROUND, true));
        for (const burst of BURSTS) {
          at(burst.day * DAY, async () => {
            await timeline.enter(
              `429 Retry-After ${burst.retryAfterS} s`,
              { error_rate: 1, error_status: 429, retry_after_s: burst.retryAfterS },
              false,
            );
            // A fresh order of shop A meets the burst at once.
            await enqueue('shop-a', a.campaignId, orderIdOf('a'), 'steady', pickFromPool(a.campaignId));
          });
          at(burst.day * DAY + BURST_MS, () => timeline.enter('background', BACKGROUND, true));
          fineBetween(burst.day * DAY, burst.day * DAY + 2 * BURST_MS);
        }
        at(6 * DAY, () => timeline.enter('lost answers', LOST_ANSWERS, true));
        // Near their deadlines: clicks of hours 1-4 of day 0 (three per kind, both shops), ordered 45 min
        // before their deadline; the first try meets the kind's fault, every later one a working service.
        const nearClicks = new Map<
          string,
          Array<{ account: Order['account']; click: { token: string; clickedAt: number } }>
        >();
        NEAR_DEADLINE_FAULTS.forEach(({ kind }, i) => {
          at((1 + i) * HOUR + 5 * MIN, async () => {
            const list = [];
            for (const account of ['shop-a', 'shop-b', 'shop-b'] as const)
              list.push({ account, click: await click(worldOf(account).campaignId, account) });
            nearClicks.set(kind, list);
          });
        });
        // Its window's last hour unreachable: an outage from 40 min before the deadline of clicks of hour 6.
        let outageClicks: Array<{ account: Order['account']; click: { token: string; clickedAt: number } }> =
          [];
        at(6 * HOUR + 5 * MIN, async () => {
          for (const account of ['shop-a', 'shop-b', 'shop-a'] as const)
            outageClicks.push({ account, click: await click(worldOf(account).campaignId, account) });
        });
        // Deadlines are the click + 7 days − the 1 h safety margin (the outbox's default policy).
        const deadlineOfClickAt = (offsetMs: number) => offsetMs + 7 * DAY - HOUR;
        NEAR_DEADLINE_FAULTS.forEach(({ kind, faults }, i) => {
          const clickOffset = (1 + i) * HOUR + 5 * MIN;
          const enqueueAt = deadlineOfClickAt(clickOffset) - NEAR_DEADLINE_LEAD_MS;
          at(enqueueAt, async () => {
            await timeline.enter(`near-deadline first try: ${kind}`, faults, false);
            const mine: Order[] = [];
            for (const { account, click: c } of nearClicks.get(kind) ?? [])
              mine.push(
                await enqueue(
                  account,
                  worldOf(account).campaignId,
                  orderIdOf('nd'),
                  `near-deadline: ${kind}`,
                  c,
                ),
              );
            // Real time: until each has had its first try (a paused scope may send none; bounded).
            const until = Date.now() + 2_000;
            while (Date.now() < until && !mine.every((o) => (attemptsSeen.get(o.jobId) ?? 0) >= 1))
              await sleep(10);
            await timeline.enter('lost answers', LOST_ANSWERS, true);
          });
          fineBetween(enqueueAt - 5 * MIN, enqueueAt + NEAR_DEADLINE_LEAD_MS + 30 * MIN);
          if (i >= 2)
            busyWindows.push([t0 + enqueueAt - 5 * MIN, t0 + enqueueAt + NEAR_DEADLINE_LEAD_MS + 15 * MIN]);
        });
        const outageFrom = deadlineOfClickAt(6 * HOUR + 5 * MIN) - 40 * MIN;
        at(outageFrom, async () => {
          await timeline.enter('outage', { error_rate: 1, error_status: 503 }, false);
          for (const { account, click: c } of outageClicks)
            await enqueue(account, worldOf(account).campaignId, orderIdOf('out'), 'outage', c);
          outageClicks = [];
        });
        at(outageFrom + 50 * MIN, () => timeline.enter('lost answers', LOST_ANSWERS, true));
        fineBetween(outageFrom - 5 * MIN, outageFrom + 60 * MIN);

        // ---- the run: advance the clock step by step, run what is due, let the Dispatcher work ----
        dispatcher.start();
        const settle = async () => {
          dispatcher.wake();
          await sleep(12);
          const until = Date.now() + SETTLE_LIMIT_MS;
          while (Date.now() < until && (await dispatcher.metrics()).inflight > 0) await sleep(5);
        };
        /** Jobs seen open more than `OVERDUE_TOLERANCE_MS` past their deadline, by id: how late, when. */
        const overdueSeen = new Map<string, string>();
        let nextOverdueCheck = t0 + OVERDUE_CHECK_MS;
        const steps = await agenda.run({
          now,
          advance: (ms) => void sandbox.advance(ms),
          end: t0 + RUN_MS,
          stepMs: STEP_MS,
          fineStepMs: FINE_STEP_MS,
          afterStep: async (t) => {
            if (busyWindows.some(([from, to]) => t >= from && t < to)) busy.start();
            else busy.stop();
            await settle();
            if (t >= nextOverdueCheck) {
              nextOverdueCheck += OVERDUE_CHECK_MS;
              for (const job of await outbox.listJobs({ states: ['pending', 'inflight'], limit: 1_000 })) {
                const late = job.deadline === null ? 0 : t - job.deadline;
                if (late > OVERDUE_TOLERANCE_MS && !overdueSeen.has(job.id))
                  overdueSeen.set(
                    job.id,
                    `${(late / HOUR).toFixed(1)} h past at ${((t - t0) / DAY).toFixed(3)}d`,
                  );
              }
            }
            expect(Date.now() - started, `${tag} the run must end in time`).toBeLessThan(RUN_LIMIT_MS);
          },
        });
        busy.stop();
        await settle();
        await dispatcher.stop({ timeoutMs: 5_000 });
        await timeline.enter('end', {}, true);
        const endAt = now();

        // ---- the verdict, from the sandbox's own records ----
        const applied = new Map<string, SandboxConversion>();
        const late: Record<string, number> = {};
        for (const [account, w] of Object.entries(worlds)) {
          const report = await w.conversions();
          late[account] = report.counts.late;
          for (const c of report.conversions) applied.set(`${account}/${c.order_id}`, c);
        }
        const jobs = new Map<string, Job>();
        for (let page = 0; ; page++) {
          const list = await outbox.listJobs({ limit: 1_000, offset: page * 1_000 });
          for (const job of list) jobs.set(job.id, job);
          if (list.length < 1_000) break;
        }
        const explain = async (list: readonly Order[]) =>
          Promise.all(
            list.map(async (o) => describeOrder(t0, o, jobs.get(o.jobId), await outbox.history(o.jobId))),
          );
        const reachable = (o: Order) => timeline.reachableWithin(o.enqueuedAt, o.deadline);
        const special = new Set<Group>(['pixel: held before the switch', 'conflict (409)']);
        const mustApply = orders.filter((o) => !special.has(o.group) && reachable(o));
        const neverReachable = orders.filter((o) => !special.has(o.group) && !reachable(o));
        const bid = a.bidMicros;

        // 1. Every order whose service was reachable inside its window was applied, once, with its value,
        //    before its deadline.
        const notApplied = mustApply.filter((o) => {
          const c = applied.get(orderKey(o));
          return (
            c === undefined ||
            c.value_micros !== o.valueMicros ||
            c.charged_micros !== bid ||
            Date.parse(c.confirmed_at) > o.deadline
          );
        });
        expect
          .soft(
            await explain(notApplied),
            `${tag} orders reachable in their window but not applied once (of ${mustApply.length})`,
          )
          .toEqual([]);

        // 2. Nothing reached the service after its window.
        expect
          .soft(late, `${tag} confirmations that reached the service after their window`)
          .toEqual({ 'shop-a': 0, 'shop-b': 0 });

        // 3. No job is pending (or inflight) past its deadline.
        const overdue = [...jobs.values()].filter(
          (j) =>
            (j.state === 'pending' || j.state === 'inflight') && j.deadline !== null && j.deadline < endAt,
        );
        const orderOfJob = new Map(orders.map((o) => [o.jobId, o]));
        expect
          .soft(
            await explain(overdue.map((j) => orderOfJob.get(j.id) as Order)),
            `${tag} jobs still open past their deadline`,
          )
          .toEqual([]);

        //    And while the run went on: none was left open past its deadline (expired at once, not later).
        const leftOpen = [...overdueSeen].map(
          ([id, late]) => `${describeOrder(t0, orderOfJob.get(id) as Order, jobs.get(id))}: ${late}`,
        );
        expect
          .soft(leftOpen, `${tag} jobs seen open more than an hour past their deadline during the run`)
          .toEqual([]);

        // 4. Every expiry counted alike: the Dispatcher's events and counters, the outbox's stats and list.
        const stats = await outbox.stats(endAt);
        const expiredJobs = [...jobs.values()].filter((j) => j.state === 'expired');
        const counters = (await dispatcher.metrics()).counters;
        expect
          .soft(
            {
              events: expiredEvents.size,
              counters: counters.expired,
              stats: stats.counts.expired,
              listed: expiredJobs.length,
            },
            `${tag} expiries counted differently`,
          )
          .toEqual({
            events: expiredJobs.length,
            counters: expiredJobs.length,
            stats: expiredJobs.length,
            listed: expiredJobs.length,
          });

        // 5. Every expiry explained: a stored reason, and given at its deadline or near it (a failed last
        //    chance). No answer of the service says a window closed here: nothing reaches it late.
        const unexplained = expiredJobs.filter((j) => {
          const event = expiredEvents.get(j.id);
          return (
            !j.lastError ||
            event === undefined ||
            j.deadline === null ||
            event.at < j.deadline - EARLY_EXPIRY_TOLERANCE_MS
          );
        });
        expect
          .soft(
            await explain(unexplained.map((j) => orderOfJob.get(j.id) as Order)),
            `${tag} expiries without a reason, or before their deadline`,
          )
          .toEqual([]);

        // 6. Orders whose service was never reachable in their window: expired, never applied.
        const wronglyEnded = neverReachable.filter(
          (o) => jobs.get(o.jobId)?.state !== 'expired' || applied.has(orderKey(o)),
        );
        expect
          .soft(await explain(wronglyEnded), `${tag} unreachable orders not expired (or applied)`)
          .toEqual([]);

        // 7. A 409 conflict is the order's own refusal: dead with its reason, never held, never expired;
        //    the service keeps the first confirmation.
        const conflictOrders = orders.filter((o) => o.group === 'conflict (409)');
        const badConflicts = conflictOrders.filter((o) => {
          const job = jobs.get(o.jobId);
          return (
            job?.state !== 'dead' ||
            job.heldAt !== null ||
            !/409|conflict|already confirmed/i.test(job.lastError ?? '') ||
            applied.get(orderKey(o))?.value_micros !== 111
          );
        });
        expect
          .soft(await explain(badConflicts), `${tag} 409 conflicts not dead-lettered as conflicts`)
          .toEqual([]);

        // 8. Orders held while their campaign was on pixel wait for a decision (`onSwitch: 'ask'`).
        const pixelHeld = orders.filter((o) => o.group === 'pixel: held before the switch');
        expect
          .soft(
            pixelHeldOrderProblems(pixelHeld, jobs, applied, endAt, (o) =>
              describeOrder(t0, o, jobs.get(o.jobId)),
            ),
            `${tag} pixel-campaign orders held before the switch`,
          )
          .toEqual([]);

        // 9. Held orders do not storm the service: one probe per held problem per holdProbeMs, besides the
        //    first try of each order. (Shop A's only 422s are the pixel campaign's refusals.)
        const requestsA = await control.requests({ accountId: a.accountId, key: 'conversions' });
        const refusedA = requestsA.requests.filter((r) => r.status === 422).length;
        const switchedAt = t0 + 3 * DAY;
        const heldSpan = switchedAt - Math.min(...pixelHeld.map((o) => o.enqueuedAt));
        const probeBound = pixelHeld.length + Math.ceil(heldSpan / HOLD_PROBE_MS) + 2;
        expect
          .soft(refusedA, `${tag} 422 refusals of the pixel campaign (at most ${probeBound})`)
          .toBeLessThanOrEqual(probeBound);

        const all = await control.requests();
        const unanswered = all.requests.filter((r) => r.status === null).length;
        const duplicates =
          (await a.conversions()).counts.duplicates + (await b.conversions()).counts.duplicates;
        const doubleBilled = pixelHeld.filter((o) => o.pixelBilled && applied.has(orderKey(o))).length;
        console.log(
          `waits-chaos ${storeName}: seed ${seed}, ${orders.length} orders (${mustApply.length} must apply, ${neverReachable.length} unreachable), ` +
            `${all.requests.length} requests (${unanswered} unanswered, ${duplicates} duplicates), ${expiredJobs.length} expired, ` +
            `${doubleBilled} pixel-billed orders also applied by s2s, ${steps} steps, pauses [${pauses.join('; ')}], ` +
            `errors [${errors.join('; ')}], ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );

        // The faults did happen (else the run proves nothing).
        const statuses = new Set(all.requests.map((r) => r.status));
        expect(all.dropped, `${tag} request log overflow`).toBe(0);
        for (const status of [429, 503, 422, 409, null])
          expect(statuses, `${tag} status ${status} seen`).toContain(status);
        expect(busy.busyMs, `${tag} the host was busy`).toBeGreaterThan(0);
        expect(neverReachable.length, `${tag} some orders had no reachable service`).toBeGreaterThan(0);
        expect(
          pixelHeld.filter((o) => o.pixelBilled).length,
          `${tag} the pixel billed some held orders`,
        ).toBeGreaterThan(0);
      },
      RUN_LIMIT_MS + 30_000,
    );
  }
});
