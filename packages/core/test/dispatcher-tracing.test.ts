/**
 * The Dispatcher's `tracing` hooks: told of each delivery and its one request (path, URL, attempt, status,
 * error type, outcome), the headers they give sent with the request; a hook that throws or gives a header
 * the request carries itself never disturbs delivery.
 */
import type { DeliveryTracing, Job } from '@postback/core';
import type { TracedRequest, TracedRequestEnd } from '@postback/core/store';
import { describe, expect, it } from 'vitest';
import {
  API_KEY,
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

interface Told {
  deliveries: Array<{ job: Job; startedAt: number; end?: { outcome: string; endedAt: number } }>;
  requests: Array<{ request: TracedRequest; end?: TracedRequestEnd }>;
}

/** A tracing that notes what it is told, and gives `headers` to every request. */
function notingTracing(headers?: Record<string, string>): { tracing: DeliveryTracing; told: Told } {
  const told: Told = { deliveries: [], requests: [] };
  const tracing: DeliveryTracing = {
    delivery(job, startedAt) {
      const delivery: Told['deliveries'][number] = { job, startedAt };
      told.deliveries.push(delivery);
      return {
        request(request) {
          const noted: Told['requests'][number] = { request };
          told.requests.push(noted);
          return {
            ...(headers === undefined ? {} : { headers }),
            end: (end) => {
              noted.end = end;
            },
          };
        },
        end: (end) => {
          delivery.end = end;
        },
      };
    },
  };
  return { tracing, told };
}

describe('Dispatcher tracing', () => {
  it('tells each delivery and its request, and sends the headers it gives', async () => {
    service.script(CONFIRM_PATH, { status: 503, body: { detail: 'busy' } });
    const job = await enqueue('ord_t');
    const { tracing, told } = notingTracing({ traceparent: 'tp-1', Authorization: 'Bearer not-ours' });
    const dispatcher = dispatcherWith({ tracing });
    expect(await dispatcher.runOnce()).toMatchObject({ retried: 1 });
    clock.advance(1_000);
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1 });

    expect(told.deliveries.map((d) => [d.job.id, d.end?.outcome])).toEqual([
      [job.id, 'retried'],
      [job.id, 'delivered'],
    ]);
    expect(told.requests.map(({ request: r, end }) => [r.method, r.path, r.url, r.attempt, end])).toEqual([
      [
        'POST',
        CONFIRM_PATH,
        `${service.url}${CONFIRM_PATH}`,
        1,
        expect.objectContaining({ outcome: 'transient', status: 503, errorType: '503' }),
      ],
      [
        'POST',
        CONFIRM_PATH,
        `${service.url}${CONFIRM_PATH}`,
        2,
        expect.objectContaining({ outcome: 'delivered', status: 200, errorType: null }),
      ],
    ]);
    // The trace's headers go with each request; one the request carries itself is dropped, not sent.
    for (const request of confirmRequests()) {
      expect(request.headers.traceparent).toBe('tp-1');
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    }
    expect(eventsNamed('error')).toEqual([]);
  });

  it('delivers as ever when a hook throws, and reports it as an error during tracing', async () => {
    const job = await enqueue('ord_throw');
    const tracing: DeliveryTracing = {
      delivery: () => ({
        request: () => {
          throw new Error('tracer broke');
        },
        end: () => {
          throw new Error('tracer broke again');
        },
      }),
    };
    expect(await dispatcherWith({ tracing }).runOnce()).toMatchObject({ delivered: 1 });
    expect(await outbox.get(job.id)).toMatchObject({ state: 'delivered' });
    expect(eventsNamed('error').map((e) => e.during)).toEqual(['tracing', 'tracing']);
  });

  it('refuses a tracing without a delivery method, naming the option', () => {
    expect(() => dispatcherWith({ tracing: {} as DeliveryTracing })).toThrow(
      expect.objectContaining({ field: 'tracing' }),
    );
  });
});
