import { describe, expect, it } from 'vitest';
import { DEFAULT_RECORD_DELAY_MS, dispatcherOptionsSchema } from './options.ts';
import { createRecordBatch } from './record-batch.ts';

const settledWithin = async (promise: Promise<void>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('the record batch', () => {
  it('lets an outcome be recorded at once when no claim is coming to share its commit', async () => {
    const batch = createRecordBatch(60_000, () => false);
    expect(await settledWithin(batch.next(), 50)).toBe(true);
  });

  it('holds outcomes together until flushed, then lets them all go', async () => {
    const batch = createRecordBatch(60_000, () => true);
    const first = batch.next();
    const second = batch.next();
    expect(await settledWithin(first, 20)).toBe(false);
    batch.flush();
    expect(
      await settledWithin(
        Promise.all([first, second]).then(() => {}),
        50,
      ),
    ).toBe(true);
  });

  it('lets waiting outcomes go after the record delay without a flush', async () => {
    const batch = createRecordBatch(10, () => true);
    expect(await settledWithin(batch.next(), 1_000)).toBe(true);
  });

  it('defaults the record delay to DEFAULT_RECORD_DELAY_MS, 5 ms', () => {
    const parsed = dispatcherOptionsSchema.parse({
      outbox: Object.fromEntries(
        ['claim', 'complete', 'retry', 'fail', 'release', 'extendLease', 'stats'].map((m) => [m, () => {}]),
      ),
      client: { conversions: { confirm: () => {}, refund: () => {} } },
    });
    expect(parsed.recordDelayMs).toBe(DEFAULT_RECORD_DELAY_MS);
    expect(DEFAULT_RECORD_DELAY_MS).toBe(5);
  });
});
