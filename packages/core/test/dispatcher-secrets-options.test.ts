/**
 * The Dispatcher keeps the API key out of everything it emits or stores, and rejects bad options.
 * Real HTTP to a scripted fake of the ad service; set-up in `dispatcher-harness.ts`.
 */
import { inspect } from 'node:util';
import { createDispatcher, OptionsError } from '@postback/core';
import { describe, expect, it } from 'vitest';
import {
  API_KEY,
  client,
  dispatcherWith,
  enqueue,
  events,
  eventsNamed,
  outbox,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';
import { CONFIRM_PATH } from './fake-ad-service.ts';

setUpDispatcherHarness();

describe('Dispatcher secrets and options', () => {
  it('never lets the API key reach events, dead-letter reasons, job records or inspect output', async () => {
    service.script(CONFIRM_PATH, {
      status: 400,
      body: { detail: `rejected header Authorization: Bearer ${API_KEY}` },
    });
    service.script(CONFIRM_PATH, { status: 503, body: { detail: `upstream saw api_key=${API_KEY}` } });
    await enqueue('ord_1');
    await enqueue('ord_2');
    const dispatcher = dispatcherWith();
    await dispatcher.runOnce();
    expect(eventsNamed('dead')).toHaveLength(1);
    expect(eventsNamed('retried')).toHaveLength(1);
    const everything = [
      JSON.stringify(events),
      inspect(events, { depth: 10 }),
      JSON.stringify(await outbox.getByOrder('ord_1')),
      JSON.stringify(await outbox.getByOrder('ord_2')),
      inspect(dispatcher, { depth: 5 }),
      JSON.stringify(await dispatcher.metrics()),
    ].join('\n');
    expect(everything).not.toContain('TOPSECRET');
    expect(everything).toContain('[redacted]');
  });

  it('rejects an unknown option by name and a bad value by its path', () => {
    const base = { outbox, client };
    expect(() => createDispatcher({ ...base, concurency: 4 } as never)).toThrow(OptionsError);
    expect(() => createDispatcher({ ...base, concurency: 4 } as never)).toThrow(/concurency/);
    expect(() => createDispatcher({ ...base, concurrency: 0 })).toThrow(
      expect.objectContaining({ field: 'concurrency' }),
    );
    expect(() => createDispatcher({ ...base, backoff: { baseMs: -1 } })).toThrow(
      expect.objectContaining({ field: 'backoff.baseMs' }),
    );
    expect(() => createDispatcher({ outbox, client: {} as never })).toThrow(
      expect.objectContaining({ field: 'client' }),
    );
  });
});
