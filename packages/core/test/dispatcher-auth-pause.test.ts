/**
 * The Dispatcher pausing all delivery on a 401 or 403 and resuming after a probe succeeds.
 * Real HTTP to a scripted fake of the ad service; set-up in `dispatcher-harness.ts`.
 */
import { describe, expect, it } from 'vitest';
import {
  clock,
  confirmRequests,
  dispatcherWith,
  enqueue,
  eventsNamed,
  outbox,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';
import { CONFIRM_PATH } from './fake-ad-service.ts';

setUpDispatcherHarness();

describe('Dispatcher auth pause', () => {
  it.each([401, 403])(
    'pauses all delivery on %i without burning attempts, and resumes after a probe succeeds',
    async (status) => {
      service.script(CONFIRM_PATH, { status, body: { detail: 'key revoked' } });
      const jobs = [await enqueue('ord_1'), await enqueue('ord_2'), await enqueue('ord_3')];
      const dispatcher = dispatcherWith({ concurrency: 1, batchSize: 3, authPauseMs: 60_000 });
      expect(await dispatcher.runOnce()).toMatchObject({ claimed: 3, deferred: 3 });
      expect(confirmRequests()).toHaveLength(1); // the other two were not sent into the outage
      expect(eventsNamed('paused')).toEqual([
        expect.objectContaining({ status, until: clock.now() + 60_000 }),
      ]);
      expect(dispatcher.state).toBe('paused');
      for (const job of jobs) expect((await outbox.get(job.id))?.attempts).toBe(0);

      clock.advance(30_000);
      expect(await dispatcher.runOnce()).toMatchObject({ claimed: 0 });
      expect(confirmRequests()).toHaveLength(1);

      clock.advance(30_000);
      expect(await dispatcher.runOnce()).toMatchObject({ claimed: 1, delivered: 1 }); // the probe
      expect(eventsNamed('resumed')).toEqual([{ pausedForMs: 60_000 }]);
      expect(await dispatcher.drain()).toMatchObject({ delivered: 2 });
      expect(confirmRequests()).toHaveLength(4);
      expect(eventsNamed('paused')).toHaveLength(1);
    },
  );

  it('stays paused without a new alert when the probe is refused again', async () => {
    service.script(CONFIRM_PATH, { status: 401 }, { status: 401 });
    await enqueue('ord_1');
    const dispatcher = dispatcherWith({ authPauseMs: 1_000 });
    await dispatcher.runOnce();
    clock.advance(1_000);
    await dispatcher.runOnce();
    expect(dispatcher.state).toBe('paused');
    expect(eventsNamed('paused')).toHaveLength(1);
    expect(eventsNamed('resumed')).toHaveLength(0);
  });
});
