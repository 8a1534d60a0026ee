/**
 * A SQLite outbox file in its own temp directory for the cross-package suites, with the counts a test
 * asserts on at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StateCounts } from '@postback/core/store';
import { createSqliteOutbox, type SqliteOutbox } from '@postback/sqlite';

/** A temp SQLite outbox file; `cleanup()` closes and removes it. */
export interface OutboxFile {
  file: string;
  outbox: SqliteOutbox;
  counts(): Promise<StateCounts>;
  cleanup(): Promise<void>;
}

/**
 * Creates `postback.db` in a fresh temp directory and opens it.
 *
 * @example
 * ```ts
 * const db = createOutboxFile();
 * await db.outbox.confirm(input);
 * ```
 */
export function createOutboxFile(prefix = 'postback-suite-'): OutboxFile {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'postback.db');
  const outbox = createSqliteOutbox({ filename: file });
  return {
    file,
    outbox,
    counts: async () => (await outbox.stats(Date.now())).counts,
    async cleanup() {
      await outbox.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
