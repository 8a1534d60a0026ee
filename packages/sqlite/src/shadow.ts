/**
 * The SQLite outbox's shadow mode (core's `OutboxShadow`): each call checked at once by core's shadow
 * rules, its writes through the outbox's group commit (`shadow-operations.ts` runs them), its reads on the
 * calling thread's connection.
 */
import type { OutboxShadow } from '@postback/core';
import {
  checkEpoch,
  checkShadowEnd,
  checkShadowRecord,
  checkShadowScope,
  checkSpendReading,
} from '@postback/core/store';
import type { OutboxOperations } from './outbox-operations.ts';
import type { OutboxWriter } from './outbox-writer.ts';

/** What the shadow mode of a SQLite outbox needs of it. */
export interface SqliteShadowContext {
  writer: Pick<OutboxWriter, 'write'>;
  ops: Pick<OutboxOperations, 'shadowSettings' | 'spend'>;
  /** Checks a call's input synchronously, then runs `then` (rejects when the outbox is closed). */
  guard<P, T>(prepare: () => P, then: (prepared: P) => Promise<T>): Promise<T>;
  /** Runs a read (rejects when the outbox is closed). */
  read<T>(fn: () => T): Promise<T>;
}

/** Creates the shadow mode of a SQLite outbox. */
export function createSqliteShadow(ctx: SqliteShadowContext): OutboxShadow {
  const { writer, ops, guard, read } = ctx;
  return {
    start: (scope, now) =>
      guard(
        () => ({ scope: checkShadowScope(scope), now: checkEpoch(now, 'now') }),
        (c) => writer.write('shadowStart', [c.scope, c.now]),
      ),
    settings: () => read(() => ops.shadowSettings()),
    record: (job, options) =>
      guard(
        () => checkShadowRecord(job, options),
        (c) => writer.write('shadowRecord', [c.job, c.now]),
      ),
    end: (scope, options) =>
      guard(
        () => checkShadowEnd(scope, options),
        (c) => writer.write('shadowEnd', [c.scope, c.now, c.sendCreatedFrom]),
      ),
    noteSpend: (reading) =>
      guard(
        () => checkSpendReading(reading),
        (checked) => writer.write('noteSpend', [checked]),
      ),
    spend: (options) => read(() => ops.spend(checkEpoch(options?.since, 'since'))),
  };
}
