/**
 * The `Outbox` conformance suite: one set of vitest tests that every store (memory, SQLite, Postgres,
 * SQS) runs, so the rules of the `Outbox` interface hold the same everywhere. The suite owns a fake clock
 * and a non-default window policy (so a store that ignores the policy fails), builds a fresh outbox per
 * test through the backend's factory, and closes and cleans it up after.
 */
import { afterEach, beforeEach, describe } from 'vitest';
import type { WindowPolicy } from '../policy.ts';
import type { Outbox } from '../queue/outbox-types.ts';
import { createFakeClock, type FakeClock } from './fake-clock.ts';
import { describeAccounts } from './outbox-conformance/accounts.ts';
import { describeClaim } from './outbox-conformance/claim.ts';
import { describeClosed } from './outbox-conformance/closed.ts';
import { describeCrashes } from './outbox-conformance/crashes.ts';
import { describeDeadJobs } from './outbox-conformance/dead-jobs.ts';
import { describeEnqueue } from './outbox-conformance/enqueue.ts';
import { describeHolds } from './outbox-conformance/holds.ts';
import { describeLedger } from './outbox-conformance/ledger.ts';
import { describeMaybeApplied } from './outbox-conformance/maybe-applied.ts';
import { describeOperatorView } from './outbox-conformance/operator-view.ts';
import { describeRefunds } from './outbox-conformance/refunds.ts';
import { describeReturnWindow } from './outbox-conformance/return-window.ts';
import { describeShadow } from './outbox-conformance/shadow.ts';
import { describeStats } from './outbox-conformance/stats.ts';
import { createSuite, SUITE_POLICY } from './outbox-conformance/suite.ts';
import { describeSwitches } from './outbox-conformance/switches.ts';
import { describeTransitions } from './outbox-conformance/transitions.ts';
import type { DescribeOutboxOptions, OutboxFactory } from './outbox-conformance/types.ts';
import { describeUnmatched } from './outbox-conformance/unmatched.ts';
import { describeValidation } from './outbox-conformance/validation.ts';
import { describeWaits } from './outbox-conformance/waits.ts';
import { describeWithdraw } from './outbox-conformance/withdraw.ts';

export { createFakeClock, type FakeClock } from './fake-clock.ts';
export type {
  DescribeOutboxOptions,
  OutboxCapability,
  OutboxFactory,
  OutboxFactoryContext,
  OutboxUnderTest,
} from './outbox-conformance/types.ts';

/**
 * Registers the conformance tests for an `Outbox` implementation.
 *
 * @param name - shown in the describe block, e.g. `"sqlite"`
 * @param factory - builds a fresh outbox per test with the suite's clock and policy
 * @example
 * ```ts
 * import { describeOutbox } from '@postback/core/testing';
 * describeOutbox('sqlite', async ({ now, policy }) => {
 *   const dir = await mkdtemp(join(tmpdir(), 'pb-'));
 *   const outbox = await openSqliteOutbox({ path: join(dir, 'jobs.db'), now, policy });
 *   return { outbox, cleanup: () => rm(dir, { recursive: true }) };
 * });
 * ```
 */
export function describeOutbox(
  name: string,
  factory: OutboxFactory,
  options: DescribeOutboxOptions = {},
): void {
  const current = {} as {
    outbox: Outbox;
    clock: FakeClock;
    reopen: (policy: WindowPolicy) => Promise<void>;
  };
  const s = createSuite(current, options.unsupported ?? {}, options.timeoutMs ?? 15_000);

  describe(`Outbox conformance: ${name}`, () => {
    let cleanup: (() => Promise<void> | void) | undefined;
    const open = async (policy: WindowPolicy) => {
      const made = await factory({ now: current.clock.now, policy });
      current.outbox = made.outbox;
      cleanup = made.cleanup;
    };
    const close = async () => {
      try {
        await current.outbox.close();
      } finally {
        await cleanup?.();
        cleanup = undefined;
      }
    };
    current.reopen = async (policy) => {
      await close();
      await open(policy);
    };

    beforeEach(async () => {
      current.clock = createFakeClock();
      await open(SUITE_POLICY);
    });

    afterEach(close);

    describeValidation(s);
    describeEnqueue(s);
    describeClaim(s);
    describeTransitions(s);
    describeRefunds(s);
    describeWithdraw(s);
    describeReturnWindow(s);
    describeUnmatched(s);
    describeMaybeApplied(s);
    describeDeadJobs(s);
    describeLedger(s);
    describeStats(s);
    describeHolds(s);
    describeWaits(s);
    describeShadow(s);
    describeSwitches(s);
    describeAccounts(s);
    describeOperatorView(s);
    describeCrashes(s);
    describeClosed(s);
  });
}
