/**
 * The SQLite outbox's switches of held campaigns (core's `OutboxSwitches`): each call checked at once by
 * core's switch rules, its writes through the outbox's group commit (`switch-operations.ts` runs them),
 * its reads on the calling thread's connection.
 */
import { checkHeldDecision, checkSwitchSeen, type OutboxSwitches } from '@postback/core/store';
import type { OutboxOperations } from './outbox-operations.ts';
import type { OutboxWriter } from './outbox-writer.ts';

/** What the switches of a SQLite outbox need of it. */
export interface SqliteSwitchesContext {
  writer: Pick<OutboxWriter, 'write'>;
  ops: Pick<OutboxOperations, 'switchList'>;
  /** Checks a call's input synchronously, then runs `then` (rejects when the outbox is closed). */
  guard<P, T>(prepare: () => P, then: (prepared: P) => Promise<T>): Promise<T>;
  /** Runs a read (rejects when the outbox is closed). */
  read<T>(fn: () => T): Promise<T>;
}

/** Creates the switches of a SQLite outbox. */
export function createSqliteSwitches(ctx: SqliteSwitchesContext): OutboxSwitches {
  const { writer, ops, guard, read } = ctx;
  return {
    note: (seen) =>
      guard(
        () => checkSwitchSeen(seen),
        (checked) => writer.write('switchNote', [checked]),
      ),
    list: () => read(() => ops.switchList()),
    decide: (options) =>
      guard(
        () => checkHeldDecision(options),
        (checked) => writer.write('switchDecide', [checked]),
      ),
  };
}
