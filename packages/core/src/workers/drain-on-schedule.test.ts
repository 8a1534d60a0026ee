/**
 * `drainOnSchedule` in Node against a real sandbox over loopback: one scheduled event delivers what is
 * due through the client and hands its work to `waitUntil`. (The same in workerd: test/runtimes/workerd.test.ts.)
 */
import { createClient } from '@postback/client';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDispatcher, type Dispatcher } from '../queue/dispatcher/dispatcher.ts';
import { createMemoryOutbox } from '../queue/memory-outbox.ts';
import { drainOnSchedule } from './drain-on-schedule.ts';

let world: SandboxWorld;
beforeAll(async () => {
  world = await startSandboxWorld();
});
afterAll(() => world.close());

describe('drainOnSchedule', () => {
  it('delivers the due jobs on a scheduled event, inside waitUntil, and closes the client', async () => {
    const outbox = createMemoryOutbox();
    const [click] = await world.clicks(1);
    if (click === undefined) throw new Error('no click');
    await outbox.confirm({ orderId: 'ord_sched_1', valueMicros: 5_000, click });
    let closed = 0;
    const waited: Array<Promise<unknown>> = [];
    const drained: unknown[] = [];
    const scheduled = drainOnSchedule(
      (env: { key: string }) => {
        const client = createClient({ baseUrl: world.url, apiKey: env.key });
        const close = async () => {
          closed += 1;
          await client.close();
        };
        return { dispatcher: createDispatcher({ outbox, client }), close };
      },
      { onDrained: (summary) => drained.push(summary) },
    );
    const summary = await scheduled({}, { key: world.conversionsKey }, { waitUntil: (p) => waited.push(p) });
    expect(summary).toMatchObject({ claimed: 1, delivered: 1 });
    expect(waited).toHaveLength(1);
    expect(drained).toEqual([summary]);
    expect(closed).toBe(1);
    const [job] = await outbox.getByOrder('ord_sched_1');
    expect(job?.state).toBe('delivered');
    const report = await world.conversions();
    expect(report.conversions.map((c) => c.order_id)).toEqual(['ord_sched_1']);
  });

  it('closes even when the drain fails, and the failure reaches waitUntil', async () => {
    let closed = false;
    const failing = {
      drain: async () => {
        throw new Error('outbox down');
      },
    } as unknown as Dispatcher;
    const scheduled = drainOnSchedule(() => ({ dispatcher: failing, close: () => (closed = true) }));
    const waited: Array<Promise<unknown>> = [];
    await expect(scheduled({}, {}, { waitUntil: (p) => waited.push(p) })).rejects.toThrow('outbox down');
    await expect(waited[0]).rejects.toThrow('outbox down');
    expect(closed).toBe(true);
  });
});
