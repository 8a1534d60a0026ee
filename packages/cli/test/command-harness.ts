/**
 * Shared set-up of the in-process command tests: a fresh SQLite outbox file per test (`db`, a live binding)
 * and `run(args)`, which runs `main` with a capturing io. A test file calls `setUpCommandHarness()` once at
 * its top.
 */
import { afterEach, beforeEach } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';

export let db: DbFixture;

/** Registers the per-test database file and its removal in the calling test file. */
export function setUpCommandHarness(): void {
  beforeEach(() => {
    db = dbFixture();
  });
  afterEach(() => db.cleanup());
}

/** Runs the CLI in-process with `args` and returns its exit code and what it printed. */
export async function run(args: string[], options: { isTTY?: boolean } = {}) {
  const io = captureIo(options);
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}
