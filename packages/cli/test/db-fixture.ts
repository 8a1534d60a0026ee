/**
 * A fresh SQLite outbox file per test, in its own temp directory, plus helpers to put jobs in the states
 * an operator meets (dead with a reason, delivered) through the public Outbox interface.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job, Outbox } from '@postback/core';
import { createSqliteOutbox } from '@postback/sqlite';

/** A temp directory holding `postback.db`; `cleanup()` removes it. */
export interface DbFixture {
  dir: string;
  file: string;
  /** Opens the outbox file directly (the test's own connection); close it before the command runs or after. */
  open(): Outbox;
  cleanup(): void;
}

export function dbFixture(): DbFixture {
  const dir = mkdtempSync(join(tmpdir(), 'postback-cli-'));
  const file = join(dir, 'postback.db');
  return {
    dir,
    file,
    open: () => createSqliteOutbox({ filename: file }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A click token of the shape the service issues. */
export function token(i: number): string {
  return `tok_${String(i).padStart(24, '0')}`;
}

/** Enqueues confirmations for `orders` and moves them to `dead` with `reason`, as a failed delivery would. */
export async function seedDead(
  outbox: Outbox,
  orders: string[],
  reason: string,
  clickedAt = Date.now(),
): Promise<Job[]> {
  for (const [i, orderId] of orders.entries()) {
    await outbox.confirm({ orderId, valueMicros: 1_000_000, click: { token: token(i), clickedAt } });
  }
  const claimed = await outbox.claim({ now: Date.now(), limit: orders.length, leaseMs: 60_000 });
  for (const job of claimed) await outbox.fail(job, { now: Date.now(), state: 'dead', reason });
  return claimed;
}
