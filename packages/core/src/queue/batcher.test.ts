import { describe, expect, it } from 'vitest';
import { createBatcher } from './batcher.ts';

/** A handler that records each batch it is given and answers `item * 10`, settling when told to. */
function recorder(options: { hold?: boolean } = {}) {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const handler = async (items: number[]) => {
    batches.push([...items]);
    if (options.hold) await new Promise<void>((resolve) => pending.push(resolve));
    return items.map((item) => item * 10);
  };
  const releaseNext = () => pending.shift()?.();
  return { batches, handler, releaseNext, held: () => pending.length };
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
const waitFor = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i += 1) await tick();
  expect(condition()).toBe(true);
};

describe('createBatcher', () => {
  it('gives each caller the result of its own item, and calls made in one turn share one batch', async () => {
    const { batches, handler } = recorder();
    const batcher = createBatcher(handler, { maxSize: 10, windowMs: 0 });
    const results = await Promise.all([1, 2, 3].map((item) => batcher.add(item)));
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('groups calls made from promises settling together (windowMs 0 waits for the end of the turn)', async () => {
    const { batches, handler } = recorder();
    const batcher = createBatcher(handler, { maxSize: 10, windowMs: 0 });
    const answers = [1, 2, 3].map((item) => Promise.resolve(item).then((value) => batcher.add(value)));
    expect(await Promise.all(answers)).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('sends a full batch at once, without waiting for the window', async () => {
    const { batches, handler } = recorder();
    const batcher = createBatcher(handler, { maxSize: 2, windowMs: 60_000 });
    const first = [batcher.add(1), batcher.add(2)];
    expect(batches).toEqual([[1, 2]]);
    expect(await Promise.all(first)).toEqual([10, 20]);
    const third = batcher.add(3);
    expect(batches).toHaveLength(1);
    await batcher.flush();
    expect(await third).toBe(30);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('lets the first waiting item wait at most windowMs for others', async () => {
    const { batches, handler } = recorder();
    const batcher = createBatcher(handler, { maxSize: 10, windowMs: 20 });
    const started = Date.now();
    const first = batcher.add(1);
    await tick();
    const second = batcher.add(2);
    expect(batches).toEqual([]);
    expect(await Promise.all([first, second])).toEqual([10, 20]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    expect(batches).toEqual([[1, 2]]);
  });

  it('rejects every caller of a batch that failed, and later batches go on', async () => {
    let calls = 0;
    const batcher = createBatcher(
      async (items: number[]) => {
        calls += 1;
        if (calls === 1) throw new Error('batch refused');
        return items;
      },
      { maxSize: 10, windowMs: 0 },
    );
    const failed = [batcher.add(1), batcher.add(2)].map((p) => p.catch((err: Error) => err.message));
    expect(await Promise.all(failed)).toEqual(['batch refused', 'batch refused']);
    expect(await batcher.add(3)).toBe(3);
  });

  it('runs batches side by side by default', async () => {
    const { batches, handler, releaseNext, held } = recorder({ hold: true });
    const batcher = createBatcher(handler, { maxSize: 1, windowMs: 0 });
    const answers = [batcher.add(1), batcher.add(2)];
    expect(batches).toEqual([[1], [2]]);
    expect(held()).toBe(2);
    releaseNext();
    releaseNext();
    expect(await Promise.all(answers)).toEqual([10, 20]);
  });

  describe('as a group commit (maxInFlight 1)', () => {
    it('handles one batch at a time; what arrives meanwhile forms the next batch', async () => {
      const { batches, handler, releaseNext } = recorder({ hold: true });
      const batcher = createBatcher(handler, { maxSize: 10, windowMs: 0, maxInFlight: 1 });
      const first = batcher.add(1);
      await waitFor(() => batches.length === 1);
      const later = [batcher.add(2), batcher.add(3), batcher.add(4)];
      await tick();
      expect(batches).toEqual([[1]]);
      releaseNext();
      expect(await first).toBe(10);
      await waitFor(() => batches.length === 2);
      expect(batches[1]).toEqual([2, 3, 4]);
      releaseNext();
      expect(await Promise.all(later)).toEqual([20, 30, 40]);
    });

    it('puts a second item of the same key in a later batch, handled after the first settled', async () => {
      const order: string[] = [];
      const batcher = createBatcher(
        async (items: Array<{ id: string; n: number }>) => {
          order.push(items.map((item) => `${item.id}${item.n}`).join(','));
          return items.map((item) => item.n);
        },
        { maxSize: 10, windowMs: 0, maxInFlight: 1, keyOf: (item) => item.id },
      );
      const answers = await Promise.all([
        batcher.add({ id: 'a', n: 1 }),
        batcher.add({ id: 'b', n: 2 }),
        batcher.add({ id: 'a', n: 3 }),
      ]);
      expect(answers).toEqual([1, 2, 3]);
      expect(order).toEqual(['a1,b2', 'a3']);
    });

    it('splits what waits beyond maxSize into the next batch', async () => {
      const { batches, handler } = recorder();
      const batcher = createBatcher(handler, { maxSize: 2, windowMs: 0, maxInFlight: 1 });
      expect(await Promise.all([1, 2, 3, 4, 5].map((item) => batcher.add(item)))).toEqual([
        10, 20, 30, 40, 50,
      ]);
      expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    });
  });

  it('flush() sends what waits now and resolves once every batch settled, those held back included', async () => {
    const { batches, handler } = recorder();
    const batcher = createBatcher(handler, { maxSize: 2, windowMs: 60_000, maxInFlight: 1 });
    const answers = [1, 2, 3, 4, 5].map((item) => batcher.add(item));
    await batcher.flush();
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50]);
    await batcher.flush();
  });
});
