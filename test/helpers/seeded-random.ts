/**
 * A seeded random source for chaos runs: a failing run prints its seed and is repeated with it
 * (`CHAOS_SEED=<seed>`). mulberry32: small, fast, and good enough to pick faults and jitter.
 */

/**
 * A random source in [0, 1) that repeats for the same seed.
 *
 * @example
 * ```ts
 * const random = seeded(42);
 * random(); // the same number on every run with seed 42
 * ```
 */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The seed of this run: `CHAOS_SEED` when given (to repeat a failing run), else a fresh one. */
export function chaosSeed(): number {
  const given = process.env.CHAOS_SEED;
  return given === undefined ? Date.now() % 1_000_000 : Number(given);
}
