/**
 * The fair claim's edges beyond the conformance suite: a claim fills up even when an account's due jobs
 * were all taken as urgent, excluded accounts' backlogs take no turn, and with more accounts than a claim
 * takes, the in-memory cursor reaches every account.
 */
import { QUIET_WITHIN_MS } from '@postback/core/store';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresOutbox, type PostgresOutbox } from '../src/index.ts';
import { freshSchema, testPool } from './pg-test-db.ts';

const pool = testPool(2);
afterAll(() => pool.end());

let outbox: PostgresOutbox;
let drop: () => Promise<void>;
beforeEach(async () => {
  const fresh = await freshSchema(pool);
  drop = fresh.drop;
  outbox = createPostgresOutbox({ pool, schema: fresh.schema });
});
afterEach(async () => {
  await outbox.close();
  await drop();
});

const now = Date.now();
const fresh = { token: 'tok_fair_claim_1', clickedAt: now - 1000 };
// Clicked so long ago that the deadline (click + 7 days − the default 1 h margin) is 30 minutes away: urgent.
const late = { token: 'tok_fair_claim_2', clickedAt: now - 7 * 86_400_000 + 3_600_000 + 30 * 60_000 };

async function enqueue(count: number, account: string | null, click = fresh, prefix = account ?? 'none') {
  for (let i = 0; i < count; i += 1)
    await outbox.confirm({ orderId: `${prefix}_${i}`, account, valueMicros: 1, click });
}

describe('the fair claim', () => {
  it('fills up when an account has only urgent jobs: they go first, and that account takes no turn', async () => {
    await enqueue(5, 'urgent-shop', late);
    await enqueue(30, 'big');
    const claimed = await outbox.claim({ now: Date.now(), limit: 16, leaseMs: 60_000 });
    expect(claimed).toHaveLength(16);
    expect(claimed.slice(0, 5).every((job) => job.account === 'urgent-shop')).toBe(true);
    expect(claimed.slice(5).every((job) => job.account === 'big')).toBe(true);
  });

  it('gives an excluded account no turn, and reaches every other account within a few claims', async () => {
    await enqueue(50, 'paused');
    const accounts = Array.from({ length: 12 }, (_, i) => `shop_${String(i).padStart(2, '0')}`);
    for (const account of accounts) await enqueue(3, account);
    // Claimed once the backlogs have waited past the quiet window: no account goes before its turn.
    const later = () => Date.now() + QUIET_WITHIN_MS + 1;
    const seen = new Set<string | null>();
    for (let round = 0; round < 3; round += 1) {
      const claimed = await outbox.claim({
        now: later(),
        limit: 4,
        leaseMs: 60_000,
        excludeAccounts: ['paused'],
      });
      expect(claimed).toHaveLength(4);
      // One job per account while more accounts have due jobs than the claim takes.
      expect(new Set(claimed.map((job) => job.account)).size).toBe(4);
      for (const job of claimed) seen.add(job.account);
    }
    expect([...seen].sort()).toEqual(accounts);
    const rest = await outbox.claim({
      now: later(),
      limit: 100,
      leaseMs: 60_000,
      excludeAccounts: ['paused'],
    });
    expect(rest).toHaveLength(12 * 3 - 12);
    expect(rest.some((job) => job.account === 'paused')).toBe(false);
  });

  it('rejects excludeAccounts that is not a list of accounts', async () => {
    await expect(
      outbox.claim({ now, limit: 1, leaseMs: 1000, excludeAccounts: 'shop' as unknown as string[] }),
    ).rejects.toThrow(TypeError);
  });
});
