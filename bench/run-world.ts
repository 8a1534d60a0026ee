/**
 * What the delivery benchmarks share: each run gets a fresh sandbox world (its own account, campaign and
 * clicks), and each run must finish within a time limit, so a stuck contender fails the benchmark instead
 * of hanging it; the jobs they enqueue, the bare loop they compare against, and the median and quantiles
 * they print.
 */
import type { AdServiceClient } from '@postback/client';
import type { Dispatcher } from '@postback/core';
import type { SandboxWorld } from '@postback/sandbox/testing';

/** Clicks made per world: many orders may be attributed to one click, and the benchmarks are about delivery. */
const CLICKS_PER_WORLD = 50;

/**
 * Starts a world with `start`, makes its clicks, runs `body` with the world and the click tokens, and
 * closes the world whatever happens.
 *
 * @example
 * ```ts
 * const rate = await withWorld(startSandboxWorld, async (world, tokens) => deliver(world, tokens));
 * ```
 */
export async function withWorld<T>(
  start: () => Promise<SandboxWorld>,
  body: (world: SandboxWorld, tokens: string[]) => Promise<T>,
): Promise<T> {
  const world = await start();
  try {
    const tokens = (await world.clicks(CLICKS_PER_WORLD)).map((c) => c.token);
    return await body(world, tokens);
  } finally {
    await world.close();
  }
}

/**
 * `promise`, or a rejection naming `what` once `limitMs` have passed.
 *
 * @example
 * ```ts
 * await withinLimit(done, 'dispatcher', 25_000);
 * ```
 */
export function withinLimit<T>(promise: Promise<T>, what: string, limitMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${limitMs} ms`)), limitMs);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Confirmations of `n` orders named `<prefix>-<i>` (`i` from `from`), on the world's clicks in turn, clicked now. */
export function confirmInputs(prefix: string, n: number, tokens: readonly string[], from = 0) {
  return Array.from({ length: n }, (_, i) => ({
    orderId: `${prefix}-${from + i}`,
    valueMicros: 1_000,
    click: { token: tokens[(from + i) % tokens.length] as string, clickedAt: Date.now() },
  }));
}

/** Resolves once `dispatcher` has delivered `jobs` jobs (call it before `start()`). */
export function deliveredAll(dispatcher: Dispatcher, jobs: number): Promise<void> {
  let count = 0;
  return new Promise((resolve) => {
    dispatcher.on('delivered', () => {
      count += 1;
      if (count === jobs) resolve();
    });
  });
}

/**
 * The baseline of the delivery benchmarks: the same POSTs with the same client and concurrency, no queue
 * at all (`concurrency` loops sharing `jobs` confirmations named `b-<i>`), within `limitMs`.
 */
export async function bareLoop(
  client: AdServiceClient,
  tokens: readonly string[],
  { jobs, concurrency, limitMs }: { jobs: number; concurrency: number; limitMs: number },
): Promise<void> {
  let next = 0;
  const loop = async () => {
    while (next < jobs) {
      const i = next++;
      await client.conversions.confirm({
        click_token: tokens[i % tokens.length] as string,
        order_id: `b-${i}`,
        value_micros: 1_000,
      });
    }
  };
  await withinLimit(Promise.all(Array.from({ length: concurrency }, loop)), 'bare loop', limitMs);
}

/** The median of `xs` (the upper middle of an even count). @example `median([3, 1, 2]); // 2` */
export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** The `q`-quantile (0..1) of `xs` by nearest rank; NaN for none. @example `quantile([5, 1, 9, 3], 0.99); // 9` */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}
