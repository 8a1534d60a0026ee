/**
 * The quick-start demo (`npm run demo`): the whole postback path on one machine, no network.
 *
 * It starts the ad-service sandbox, creates an account and an s2s campaign whose landing page is the
 * Express example shop, runs that shop (SQLite outbox in a temp dir, Dispatcher in process), and
 * simulates shoppers with plain HTTP (the sandbox's `createShopper`, a cookie jar over `fetch`): ad clicks that land and order, organic orders, and returns. It
 * waits until the outbox has delivered everything, then prints what the sandbox accepted and exits 0 —
 * or non-zero saying what did not add up.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@postback/client';
import { createShop } from '@postback/example-express-shop';
import { startSandbox } from '@postback/sandbox';
import { createShopper, type Shopper } from '@postback/sandbox/shop-testing';

const AD_SHOPPERS = 16;
const ORGANIC_SHOPPERS = 4;
const RETURNS = 3;
const PRICE_MICROS = 49_990_000;
const SETTLE_TIMEOUT_MS = 25_000;

const usd = (micros: number) => `${(micros / 1_000_000).toFixed(2)} USD`;

/** A shopper's order: the shop's answer as status and JSON. */
async function order(shopper: Shopper, orderId: string) {
  const res = await shopper.post('/orders', { order_id: orderId, total_micros: PRICE_MICROS });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function main(): Promise<string[]> {
  const problems: string[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'postback-demo-'));
  const sandbox = await startSandbox({ port: 0 });
  const cleanups: Array<() => Promise<unknown>> = [
    () => rm(dir, { recursive: true, force: true }),
    () => sandbox.close(),
  ];
  try {
    const account = await sandbox.control.createAccount({});
    const ads = createClient({ baseUrl: sandbox.url, apiKey: account.keys.all });
    cleanups.unshift(() => ads.close());

    // The shop must be running before the campaign, whose creative lands on it.
    const shop = await createShop({
      PORT: '0',
      POSTBACK_API_URL: sandbox.url,
      POSTBACK_API_KEY: account.keys.conversions,
      POSTBACK_SECRET: `demo-secret-${crypto.randomUUID()}`,
      POSTBACK_DB: join(dir, 'postback.db'),
      POSTBACK_SECURE_COOKIE: 'off',
    });
    cleanups.unshift(() => shop.close());
    console.log(`sandbox ad service   ${sandbox.url}`);
    console.log(`express example shop ${shop.url}`);

    const campaign = await ads.campaigns.create({
      name: 'Trail shoes — demo',
      pricing_model: 'cpa',
      bid_micros: 2_000_000,
      total_budget_micros: 100_000_000,
      conversion_source: 's2s',
      creatives: [
        { headline: 'Trail shoes', body: 'Light and tough', cta: 'Buy', landing_url: `${shop.url}/` },
      ],
    });
    console.log(`campaign             ${campaign.id} (cpa, s2s, bid ${usd(campaign.bid_micros ?? 0)})\n`);

    const attributedOrders: string[] = [];
    for (let i = 1; i <= AD_SHOPPERS; i++) {
      const shopper = createShopper(shop.url);
      await (await shopper.fetch((await sandbox.control.click(campaign.id)).landing_url)).text();
      if (shopper.cookie() === '') problems.push(`shopper ${i}: the landing page set no click cookie`);
      const orderId = `ord_ad_${i}`;
      const answer = await order(shopper, orderId);
      if (answer.status !== 201 || answer.json.attributed !== true)
        problems.push(`shopper ${i}: order answered ${answer.status} ${JSON.stringify(answer.json)}`);
      else attributedOrders.push(orderId);
    }
    for (let i = 1; i <= ORGANIC_SHOPPERS; i++) {
      const shopper = createShopper(shop.url);
      await (await shopper.fetch('/')).text();
      const answer = await order(shopper, `ord_organic_${i}`);
      if (answer.status !== 201 || answer.json.attributed !== false)
        problems.push(`organic shopper ${i}: order answered ${answer.status} ${JSON.stringify(answer.json)}`);
    }
    const returned = attributedOrders.slice(0, RETURNS);
    for (const orderId of returned) {
      const refund = await createShopper(shop.url).post(`/orders/${orderId}/refund`);
      await refund.body?.cancel();
      if (refund.status !== 202) problems.push(`return of ${orderId} answered ${refund.status}`);
    }
    console.log(
      `shoppers             ${AD_SHOPPERS} from the ad, ${ORGANIC_SHOPPERS} organic; ${returned.length} returns`,
    );

    // Delivery happens in the background: wait until nothing is pending or in flight (bounded).
    const started = Date.now();
    for (;;) {
      const { counts } = await shop.backend.outbox.stats(Date.now());
      if (counts.pending + counts.inflight === 0) {
        console.log(
          `outbox               settled in ${Date.now() - started} ms: ${counts.delivered} delivered, ${counts.cancelled} cancelled, ${counts.dead} dead, ${counts.expired} expired`,
        );
        if (counts.dead + counts.expired > 0)
          problems.push(`${counts.dead} dead and ${counts.expired} expired jobs`);
        break;
      }
      if (Date.now() - started > SETTLE_TIMEOUT_MS) {
        problems.push(
          `outbox still has ${counts.pending} pending and ${counts.inflight} inflight jobs after ${SETTLE_TIMEOUT_MS} ms`,
        );
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const report = await sandbox.control.conversions(account.account_id);
    const confirmed = report.conversions.filter((c) => c.state === 'confirmed');
    const reversed = report.conversions.filter((c) => c.state === 'reversed');
    // A return may cancel a confirmation before it was ever sent; then nothing is charged or reversed.
    const cancelledBeforeSend = returned.filter((id) => !report.conversions.some((c) => c.order_id === id));
    const spend = (await ads.campaigns.list()).campaigns.find((c) => c.id === campaign.id)?.spend_micros ?? 0;
    console.log('\nwhat the ad service accepted');
    console.log(`  confirmed            ${confirmed.length} (still charged)`);
    console.log(`  reversed             ${reversed.length} (returned after the confirmation was sent)`);
    console.log(
      `  cancelled unsent     ${cancelledBeforeSend.length} (returned before it was sent: never charged)`,
    );
    console.log(`  duplicates           ${report.counts.duplicates}`);
    console.log(`  late (> 7 days)      ${report.counts.late}`);
    console.log(`  rejections           ${report.counts.rejections}`);
    console.log(`  campaign spend       ${usd(spend)}`);

    const expectedConfirmed = attributedOrders.length - returned.length;
    if (confirmed.length !== expectedConfirmed)
      problems.push(
        `expected ${expectedConfirmed} confirmed conversions, the sandbox has ${confirmed.length}`,
      );
    if (reversed.length + cancelledBeforeSend.length !== returned.length)
      problems.push(
        `expected ${returned.length} returns reversed or cancelled, got ${reversed.length + cancelledBeforeSend.length}`,
      );
    if (report.counts.late !== 0) problems.push(`${report.counts.late} late confirmations`);
    if (report.counts.rejections !== 0) problems.push(`${report.counts.rejections} rejected requests`);
    if (report.conversions.some((c) => c.order_id.startsWith('ord_organic_')))
      problems.push('an organic order was reported as an ad conversion');
    if (report.conversions.some((c) => c.value_micros !== PRICE_MICROS))
      problems.push('a conversion has the wrong value');
    return problems;
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  }
}

const problems = await main().catch((error: unknown) => [
  `the demo failed: ${error instanceof Error ? error.message : String(error)}`,
]);
if (problems.length > 0) {
  console.error('\nsomething is off:');
  for (const problem of problems) console.error(`  - ${problem}`);
  process.exit(1);
}
console.log('\nok: every attributed order was confirmed once, every return reversed or cancelled.');
