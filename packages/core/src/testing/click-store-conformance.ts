/**
 * The `ClickStore` conformance suite: one set of vitest tests that every click store (memory, SQLite,
 * Postgres) runs, so `put`/`get`/`delete`/`sweep` mean the same everywhere. The suite hands the factory a
 * non-default confirmation window (a store that ignores it fails), builds a fresh store per test, and
 * closes and cleans it up after.
 *
 * A put of the token a key already holds keeps the earlier of the two times (the first time the click was
 * seen); a put of another token replaces the click.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ClickStamp, ClickStore } from '../click.ts';
import { DAY_MS, type EpochMs, resolvePolicy, type WindowPolicy } from '../policy.ts';

/** What the suite gives a backend's factory. */
export interface ClickStoreFactoryContext {
  /** The confirmation window the store must expire clicks by (deliberately not the 7-day default). */
  confirmWindowMs: number;
  /** The same window as a full policy, for stores configured with a `WindowPolicy`. */
  policy: WindowPolicy;
}

/** A backend's click store for one test, and how to dispose of what it created (files, schemas). */
export interface ClickStoreUnderTest {
  store: ClickStore;
  /** Runs after `store.close()`. */
  cleanup?: () => Promise<void> | void;
}

/** Builds a fresh, empty click store for one test. */
export type ClickStoreFactory = (
  context: ClickStoreFactoryContext,
) => Promise<ClickStoreUnderTest | ClickStore> | ClickStoreUnderTest | ClickStore;

const WINDOW_MS = 3 * DAY_MS;
const SUITE_POLICY = resolvePolicy({ confirmWindowMs: WINDOW_MS });
const T0: EpochMs = Date.UTC(2026, 0, 15, 12, 0, 0);
const click = (token: string, clickedAt: EpochMs = T0): ClickStamp => ({ token, clickedAt });

function isUnderTest(value: ClickStoreUnderTest | ClickStore): value is ClickStoreUnderTest {
  return 'store' in value && typeof (value as ClickStoreUnderTest).store === 'object';
}

/**
 * Registers the conformance tests for a `ClickStore` implementation.
 *
 * @param name - shown in the describe block, e.g. `"sqlite"`
 * @param factory - builds a fresh, empty store expiring clicks after `context.confirmWindowMs`
 * @example
 * ```ts
 * import { describeClickStore } from '@postback/core/testing';
 *
 * describeClickStore('sqlite', ({ policy }) => {
 *   const dir = mkdtempSync(join(tmpdir(), 'clicks-'));
 *   return { store: createSqliteClickStore({ filename: join(dir, 'db'), policy }), cleanup: () => rmSync(dir, { recursive: true }) };
 * });
 * ```
 */
export function describeClickStore(name: string, factory: ClickStoreFactory): void {
  describe(`ClickStore conformance: ${name}`, () => {
    let current: ClickStoreUnderTest | undefined;

    async function open(): Promise<ClickStore> {
      const made = await factory({ confirmWindowMs: WINDOW_MS, policy: SUITE_POLICY });
      current = isUnderTest(made) ? made : { store: made };
      return current.store;
    }

    afterEach(async () => {
      const done = current;
      current = undefined;
      if (done === undefined) return;
      await done.store.close();
      await done.cleanup?.();
    });

    it('returns the click put for a key, equal to what was put', async () => {
      const store = await open();
      await store.put('visitor-1', click('tok_aaaaaaaaaaaaaaaaaaaaaaaa'));
      expect(await store.get('visitor-1', T0 + 1000)).toEqual(click('tok_aaaaaaaaaaaaaaaaaaaaaaaa'));
    });

    it('returns null for a key that was never put', async () => {
      const store = await open();
      await store.put('visitor-1', click('tok_aaaaaaaaaaaaaaaaaaaaaaaa'));
      expect(await store.get('visitor-2', T0)).toBeNull();
    });

    it('replaces the click of a key on a later put (attribution is the caller’s choice)', async () => {
      const store = await open();
      await store.put('visitor-1', click('tok_first_aaaaaaaaaaaaaaaaa', T0));
      await store.put('visitor-1', click('tok_second_bbbbbbbbbbbbbbbb', T0 + 60_000));
      expect(await store.get('visitor-1', T0 + 120_000)).toEqual(
        click('tok_second_bbbbbbbbbbbbbbbb', T0 + 60_000),
      );
    });

    it('keeps the first time of a token put again for the same key (a landing URL opened again)', async () => {
      const store = await open();
      await store.put('visitor-1', click('tok_same_aaaaaaaaaaaaaaaaaa', T0));
      await store.put('visitor-1', click('tok_same_aaaaaaaaaaaaaaaaaa', T0 + 2 * DAY_MS));
      expect(await store.get('visitor-1', T0 + 2 * DAY_MS)).toEqual(click('tok_same_aaaaaaaaaaaaaaaaaa', T0));
      // Past the window of the first time, the click is gone: re-seeing the token did not extend it.
      expect(await store.get('visitor-1', T0 + WINDOW_MS + 1)).toBeNull();
    });

    it('keeps the earlier time when the same token is put with an earlier time', async () => {
      const store = await open();
      await store.put('visitor-1', click('tok_same_aaaaaaaaaaaaaaaaaa', T0 + 60_000));
      await store.put('visitor-1', click('tok_same_aaaaaaaaaaaaaaaaaa', T0));
      expect(await store.get('visitor-1', T0 + 60_000)).toEqual(click('tok_same_aaaaaaaaaaaaaaaaaa', T0));
    });

    it('keeps keys independent of each other', async () => {
      const store = await open();
      await store.put('a', click('tok_a_aaaaaaaaaaaaaaaaaaaaa'));
      await store.put('b', click('tok_b_bbbbbbbbbbbbbbbbbbbbb', T0 + 5));
      await store.delete('a');
      expect(await store.get('a', T0 + 10)).toBeNull();
      expect(await store.get('b', T0 + 10)).toEqual(click('tok_b_bbbbbbbbbbbbbbbbbbbbb', T0 + 5));
    });

    it('returns a click until it is exactly the window old, and null one millisecond later', async () => {
      const store = await open();
      await store.put('visitor-1', click('tok_edge_aaaaaaaaaaaaaaaaaa'));
      expect(await store.get('visitor-1', T0 + WINDOW_MS)).toEqual(click('tok_edge_aaaaaaaaaaaaaaaaaa'));
      expect(await store.get('visitor-1', T0 + WINDOW_MS + 1)).toBeNull();
    });

    it('expires clicks by the window it was given, not the 7-day default', async () => {
      const store = await open();
      await store.put('visitor-1', click('tok_window_aaaaaaaaaaaaaaaa'));
      expect(await store.get('visitor-1', T0 + 5 * DAY_MS)).toBeNull();
    });

    it('forgets a deleted click, and deleting an unknown key changes nothing', async () => {
      const store = await open();
      await store.put('visitor-1', click('tok_del_aaaaaaaaaaaaaaaaaaa'));
      await store.delete('nobody');
      expect(await store.get('visitor-1', T0)).toEqual(click('tok_del_aaaaaaaaaaaaaaaaaaa'));
      await store.delete('visitor-1');
      expect(await store.get('visitor-1', T0)).toBeNull();
    });

    it('sweeps exactly the clicks older than the window and reports how many', async () => {
      const store = await open();
      await store.put('old-1', click('tok_old1_aaaaaaaaaaaaaaaaaa', T0));
      await store.put('old-2', click('tok_old2_aaaaaaaaaaaaaaaaaa', T0 + 1000));
      await store.put('young', click('tok_young_aaaaaaaaaaaaaaaaa', T0 + 2 * DAY_MS));
      const now = T0 + WINDOW_MS + 1001;
      expect(await store.sweep(now)).toBe(2);
      expect(await store.get('young', now)).toEqual(click('tok_young_aaaaaaaaaaaaaaaaa', T0 + 2 * DAY_MS));
      // Swept clicks are gone even for a clock that has not moved as far.
      expect(await store.get('old-1', T0 + 1)).toBeNull();
      expect(await store.sweep(now)).toBe(0);
    });

    it('keeps keys and tokens with unusual characters exactly', async () => {
      const store = await open();
      const key = `cust'; DROP TABLE clicks; -- ☃ ${'x'.repeat(100)}`;
      const token = `${'A'.repeat(200)}-._~${'9'.repeat(200)}`;
      await store.put(key, click(token));
      expect(await store.get(key, T0)).toEqual(click(token));
      expect(await store.get(key.toUpperCase(), T0)).toBeNull();
    });

    it('is not affected by changes to the objects passed in or returned', async () => {
      const store = await open();
      const given = click('tok_copy_aaaaaaaaaaaaaaaaaa');
      await store.put('visitor-1', given);
      given.token = 'changed';
      const read = await store.get('visitor-1', T0);
      if (read !== null) read.clickedAt = 0;
      expect(await store.get('visitor-1', T0)).toEqual(click('tok_copy_aaaaaaaaaaaaaaaaaa'));
    });

    it('keeps every click of many concurrent puts to different keys', async () => {
      const store = await open();
      const keys = Array.from({ length: 50 }, (_, i) => `visitor-${i}`);
      await Promise.all(
        keys.map((key, i) => store.put(key, click(`tok_${String(i).padStart(24, '0')}`, T0 + i))),
      );
      const read = await Promise.all(keys.map((key) => store.get(key, T0 + 100)));
      expect(read).toEqual(keys.map((_, i) => click(`tok_${String(i).padStart(24, '0')}`, T0 + i)));
    });

    it('refuses an empty key', async () => {
      const store = await open();
      await expect(store.put('', click('tok_empty_aaaaaaaaaaaaaaaaa'))).rejects.toThrow();
    });
  });
}
