/**
 * How the Dispatcher batches its work with the outbox: it claims a whole batch ahead of free sending
 * slots, so a steady stream costs one claim per batch, and records each outcome as its send ends. An
 * in-process client double answers after a short random delay; the memory outbox is wrapped to log every
 * write.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryOutbox } from '../memory-outbox.ts';
import type { Outbox } from '../outbox-types.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import type { ConversionsClient } from './options.ts';

interface Write {
  op: 'claim' | 'complete' | 'retry' | 'fail' | 'release' | 'extendLease';
  limit?: number;
  /** Jobs a claim returned. */
  got?: number;
}

/** The memory outbox, logging each write. */
function loggedOutbox() {
  const inner = createMemoryOutbox();
  const writes: Write[] = [];
  const log = (op: Write['op'], limit?: number): Write => {
    const write: Write = { op, ...(limit === undefined ? {} : { limit }) };
    writes.push(write);
    return write;
  };
  const outbox: Outbox = {
    ...inner,
    claim: async (options) => {
      const write = log('claim', options.limit);
      const jobs = await inner.claim(options);
      write.got = jobs.length;
      return jobs;
    },
    complete: (job, result) => {
      log('complete');
      return inner.complete(job, result);
    },
    retry: (job, result) => {
      log('retry');
      return inner.retry(job, result);
    },
    fail: (job, result) => {
      log('fail');
      return inner.fail(job, result);
    },
    release: (jobs, now) => {
      log('release');
      return inner.release(jobs, now);
    },
    extendLease: (job, options) => {
      log('extendLease');
      return inner.extendLease(job, options);
    },
  };
  return { outbox, writes };
}

/** A client double answering each confirm after `delayMs()`; tracks sends in flight. */
function clientAfter(delayMs: (orderId: string) => number) {
  const stats = { inFlight: 0, maxInFlight: 0, sent: 0 };
  const client: ConversionsClient = {
    conversions: {
      confirm: (body, { signal }) =>
        new Promise((resolve, reject) => {
          stats.inFlight += 1;
          stats.sent += 1;
          stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
          const done = () => {
            stats.inFlight -= 1;
            signal.removeEventListener('abort', aborted);
          };
          const timer = setTimeout(() => {
            done();
            resolve({ campaign_id: 'cmp_1' });
          }, delayMs(body.order_id));
          const aborted = () => {
            clearTimeout(timer);
            done();
            reject(signal.reason);
          };
          signal.addEventListener('abort', aborted, { once: true });
        }),
      refund: async () => ({}),
    },
  };
  return { client, stats };
}

async function enqueue(outbox: Outbox, n: number) {
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    await outbox.confirm({
      orderId: `ord_${i}`,
      valueMicros: 1_000,
      click: { token: `tok_ord_${i}_XyZ`, clickedAt: now },
    });
  }
}

function deliveredAll(dispatcher: Dispatcher, n: number): Promise<void> {
  let count = 0;
  return new Promise((resolve) => {
    dispatcher.on('delivered', () => {
      count += 1;
      if (count === n) resolve();
    });
  });
}

const dispatchers: Dispatcher[] = [];
afterEach(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop({ timeoutMs: 100 });
});

describe('Dispatcher batching', () => {
  it('claims whole batches ahead of free sending slots, one claim per batch', async () => {
    const { outbox, writes } = loggedOutbox();
    const jobs = 96;
    await enqueue(outbox, jobs);
    let seed = 7;
    const { client, stats } = clientAfter(() => {
      seed = (seed * 16_807) % 2_147_483_647;
      return seed % 4; // 0–3 ms: responses arrive spread over many turns
    });
    // At full pace from the start: the adaptive pace's slow start is tested in pace.test.ts.
    const options = { concurrency: 4, batchSize: 8, pollIntervalMs: 10, pace: 'off' } as const;
    const dispatcher = createDispatcher({ outbox, client, ...options });
    dispatchers.push(dispatcher);
    const done = deliveredAll(dispatcher, jobs);
    dispatcher.start();
    await done;

    expect((await outbox.stats(Date.now())).counts.delivered).toBe(jobs);
    expect(stats.sent).toBe(jobs);
    expect(stats.maxInFlight).toBe(4); // `concurrency` still bounds the sends
    const claims = writes.filter((w) => w.op === 'claim');
    expect(claims[0]?.limit).toBe(8); // a whole batch, though only 4 can be sent at once
    // One claim per batch (claims that find the queue drained at the end return nothing).
    expect(claims.filter((c) => (c.got ?? 0) > 0)).toHaveLength(jobs / 8);
  });

  it('once a claim finds the queue drained, claims one at a time until one comes back full', async () => {
    const { outbox: logged } = loggedOutbox();
    const claims = { underWay: 0, empty: 0, emptyAtOnce: 0, afterDrained: 0 };
    let drained = false;
    let delivered = 0;
    let deliveredWhenDrained = 0;
    // A store round trip per claim; counts the claims under way once one came back empty.
    const outbox: Outbox = {
      ...logged,
      claim: async (options) => {
        claims.underWay += 1;
        if (drained) claims.afterDrained += 1;
        claims.emptyAtOnce = Math.max(claims.emptyAtOnce, drained ? claims.underWay : 0);
        await new Promise((resolve) => setTimeout(resolve, 1));
        const jobs = await logged.claim(options);
        claims.underWay -= 1;
        if (jobs.length === 0) {
          claims.empty += 1;
          if (!drained) deliveredWhenDrained = delivered;
          drained = true;
        }
        return jobs;
      },
    };
    const jobs = 24;
    await enqueue(outbox, jobs);
    let seed = 11;
    const { client } = clientAfter(() => {
      seed = (seed * 16_807) % 2_147_483_647;
      return 2 + (seed % 4);
    });
    // No poll while the test runs: every claim after the drained one was woken by the loop itself.
    const options = { concurrency: 4, batchSize: 8, pollIntervalMs: 60_000, pace: 'off' } as const;
    const dispatcher = createDispatcher({ outbox, client, ...options });
    dispatchers.push(dispatcher);
    dispatcher.on('delivered', () => {
      delivered += 1;
    });
    const done = deliveredAll(dispatcher, jobs);
    dispatcher.start();
    await done;
    await dispatcher.stop();

    expect(claims.empty).toBeGreaterThan(0); // the queue was found drained before the last sends ended
    expect(claims.emptyAtOnce).toBe(1); // never two claims at once into a drained queue
    // Then at most about one claim per job that ends (a finished send wakes the loop: it may have made
    // another job due), never a burst of them.
    expect(claims.afterDrained).toBeLessThanOrEqual(2 * (jobs - deliveredWhenDrained));
  });

  it('records an outcome while a slow send holds up the rest', async () => {
    const { outbox } = loggedOutbox();
    await enqueue(outbox, 2);
    const { client } = clientAfter((orderId) => (orderId === 'ord_0' ? 2_000 : 1));
    const dispatcher = createDispatcher({ outbox, client, concurrency: 2, batchSize: 2, pollIntervalMs: 10 });
    dispatchers.push(dispatcher);
    const delivered = new Promise<string>((resolve) => {
      dispatcher.on('delivered', ({ job }) => resolve(job.orderId));
    });
    dispatcher.start();
    expect(await delivered).toBe('ord_1');
    const [slow, quick] = await Promise.all([outbox.getByOrder('ord_0'), outbox.getByOrder('ord_1')]);
    expect(quick[0]?.state).toBe('delivered');
    expect(slow[0]?.state).toBe('inflight'); // still being sent
  });

  it('stop() gives back the jobs claimed ahead but never sent: pending, attempt not counted, counted as released', async () => {
    const { outbox } = loggedOutbox();
    await enqueue(outbox, 4);
    const { client, stats } = clientAfter(() => 60_000);
    const dispatcher = createDispatcher({ outbox, client, concurrency: 1, batchSize: 4, pollIntervalMs: 10 });
    dispatcher.start();
    while (stats.sent === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await outbox.stats(Date.now())).counts.inflight).toBe(4); // one sending, three waiting
    expect(await dispatcher.stop({ timeoutMs: 50 })).toEqual({ released: 4 });
    expect(stats.sent).toBe(1);
    const counts = (await outbox.stats(Date.now())).counts;
    expect(counts).toMatchObject({ pending: 4, inflight: 0 });
    for (let i = 0; i < 4; i++) {
      expect((await outbox.getByOrder(`ord_${i}`))[0]).toMatchObject({ attempts: 0, lease: null });
    }
  });
});

describe('Dispatcher send timeout', () => {
  it('aborts a send still unanswered after sendTimeoutMs and retries the job later, as a timeout', async () => {
    const { outbox } = loggedOutbox();
    await enqueue(outbox, 1);
    const { client, stats } = clientAfter(() => 60_000); // never answers in time
    const sendTimeoutMs = 200;
    const dispatcher = createDispatcher({
      outbox,
      client,
      sendTimeoutMs,
      backoff: { baseMs: 60_000, maxMs: 60_000, minMs: 60_000 },
      pollIntervalMs: 10,
    });
    dispatchers.push(dispatcher);
    const retried = new Promise<{ reason: string; nextAttemptAt: number }>((resolve) => {
      dispatcher.on('retried', resolve);
    });
    const started = Date.now();
    dispatcher.start();
    const { reason, nextAttemptAt } = await retried;
    const tookMs = Date.now() - started;
    // Not before the timeout; the request itself was aborted (below), long before its answer (60 s).
    expect(tookMs).toBeGreaterThanOrEqual(sendTimeoutMs);
    expect(reason).toMatch(/tim/i);
    expect(stats.inFlight).toBe(0); // the request itself was aborted
    expect(nextAttemptAt).toBeGreaterThan(Date.now() + 30_000); // a durable retry, not a quick one
    const [job] = await outbox.getByOrder('ord_0');
    expect(job).toMatchObject({ state: 'pending', attempts: 1 });
  });
});
