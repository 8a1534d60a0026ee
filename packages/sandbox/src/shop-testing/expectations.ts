/**
 * The assertions of a shop sandbox, read from the ad service's own records (the control API), never from
 * the shop: wait for the shop's worker to deliver, then say what the service applied. They throw
 * `node:assert`'s `AssertionError` (with `actual` and `expected`), which every test runner reports.
 */
import { AssertionError } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxControl, SandboxConversion } from '../control-client.ts';

const POLL_MS = 20;

/**
 * Asks `read` every 20 ms until it returns something other than `undefined`, or `timeoutMs` passed. The
 * timers are `node:timers/promises` and `performance`, which a test's fake timers leave alone.
 */
async function poll<T>(read: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined || performance.now() >= until) return value;
    await sleep(POLL_MS);
  }
}

function fail(operator: string, message: string, actual: unknown, expected: unknown): AssertionError {
  return new AssertionError({ message, actual, expected, operator });
}

/** The three assertions, for one account of one sandbox. */
export interface ShopExpectations {
  /**
   * Waits until the ad service has applied a confirmation of `orderId` (up to `timeoutMs`) and asserts
   * it carries `valueMicros`; resolves to the service's record (charged once: the service charges an
   * order id once, however often it is sent). Throws an `AssertionError` otherwise.
   */
  expectConversion(expected: {
    orderId: string;
    valueMicros: number;
    timeoutMs?: number;
  }): Promise<SandboxConversion>;
  /** Waits until the ad service has reversed `orderId` (up to `timeoutMs`); throws an `AssertionError` otherwise. */
  expectReversal(expected: { orderId: string; timeoutMs?: number }): Promise<SandboxConversion>;
  /**
   * Watches for `withinMs` (default 1 s) and asserts the ad service applied no conversion of `orderId`
   * (e.g. an order placed after the click's 7 days, or without a click).
   */
  expectNoConversion(expected: { orderId: string; withinMs?: number }): Promise<void>;
  /**
   * Asserts the ad service received no confirmation more than 7 days after its click (the service refuses
   * them; a shop that sends them is reading the wrong clock).
   */
  expectNoLateRequests(): Promise<void>;
}

/**
 * The assertions over `control` for `accountId`, waiting `timeoutMs` (conversion, reversal) and
 * `noConversionMs` (no conversion) unless told otherwise.
 *
 * @example
 * ```ts
 * const { expectConversion } = shopExpectations(control, accountId, 5_000, 1_000);
 * ```
 */
export function shopExpectations(
  control: SandboxControl,
  accountId: string,
  timeoutMs: number,
  noConversionMs: number,
): ShopExpectations {
  const applied = (orderId: string) => control.conversion(orderId, accountId);
  return {
    async expectConversion({ orderId, valueMicros, timeoutMs: wait = timeoutMs }) {
      const found = await poll(() => applied(orderId), wait);
      if (found === undefined) {
        const { counts } = await control.conversions(accountId);
        throw fail(
          'expectConversion',
          `order ${orderId} was not confirmed to the ad service within ${wait} ms (it received ` +
            `${counts.requests} confirmation requests of the shop and refused ${counts.rejections})`,
          undefined,
          { orderId, valueMicros },
        );
      }
      if (found.value_micros !== valueMicros) {
        throw fail(
          'expectConversion',
          `order ${orderId} was confirmed with value_micros ${found.value_micros}, not ${valueMicros}`,
          found.value_micros,
          valueMicros,
        );
      }
      return found;
    },
    async expectReversal({ orderId, timeoutMs: wait = timeoutMs }) {
      const found = await poll(async () => {
        const c = await applied(orderId);
        return c?.state === 'reversed' ? c : undefined;
      }, wait);
      if (found !== undefined) return found;
      const seen = await applied(orderId);
      throw fail(
        'expectReversal',
        seen === undefined
          ? `order ${orderId} was never confirmed to the ad service, so there is no reversal`
          : `order ${orderId} was confirmed but not reversed within ${wait} ms`,
        seen?.state,
        'reversed',
      );
    },
    async expectNoConversion({ orderId, withinMs = noConversionMs }) {
      const found = await poll(() => applied(orderId), withinMs);
      if (found !== undefined) {
        throw fail(
          'expectNoConversion',
          `order ${orderId} was confirmed to the ad service (now ${found.state})`,
          found,
          undefined,
        );
      }
    },
    async expectNoLateRequests() {
      const { counts } = await control.conversions(accountId);
      if (counts.late !== 0) {
        throw fail(
          'expectNoLateRequests',
          `the ad service received ${counts.late} confirmation requests more than 7 days after their click`,
          counts.late,
          0,
        );
      }
    },
  };
}
