/**
 * What the delivery benchmarks share: each run gets a fresh sandbox world (its own account, campaign and
 * clicks), and each run must finish within a time limit, so a stuck contender fails the benchmark instead
 * of hanging it.
 */
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
