/**
 * Shared set-up of the Dispatcher tests over real HTTP: the real `createClient` from `@postback/client`
 * talks to a scripted fake of the ad service on an ephemeral port, and jobs live in the memory outbox on
 * a fake clock. A test file calls `setUpDispatcherHarness()` once at its top; each test then gets a fresh
 * clock, outbox, service and client through the live bindings exported here.
 */
import { type AdServiceClient, createClient } from '@postback/client';
import {
  type ConfirmJob,
  createDispatcher,
  createMemoryOutbox,
  type Dispatcher,
  type DispatcherEventName,
  type DispatcherEvents,
  type DispatcherOptions,
  type Outbox,
} from '@postback/core';
import { createFakeClock, type FakeClock } from '@postback/core/testing';
import { afterEach, beforeEach } from 'vitest';
import { CONFIRM_PATH, type FakeAdService, startFakeAdService } from './fake-ad-service.ts';

/** The key the client sends unless a test file names its own. */
export const API_KEY = 'pbsk_live_TOPSECRET_0123456789abcdef';
export const HOUR = 3_600_000;

export interface DispatcherHarnessOptions {
  /** The key the client sends; tests look for it in what must never contain it. @defaultValue API_KEY */
  apiKey?: string;
  /** What `enqueue` confirms by default. @defaultValue 12_340_000 */
  valueMicros?: number;
  /** Ends each click token, `tok_<orderId>_<tokenSuffix>`. @defaultValue 'XyZ' */
  tokenSuffix?: string;
}

export let clock: FakeClock;
export let outbox: Outbox;
export let service: FakeAdService;
export let client: AdServiceClient;
/** Every event of every dispatcher made by `dispatcherWith` in the current test, in order. */
export let events: Array<{ name: DispatcherEventName; payload: unknown }>;

const dispatchers: Dispatcher[] = [];
let settings: Required<DispatcherHarnessOptions>;

/** Registers the per-test set-up and tear-down in the calling test file. */
export function setUpDispatcherHarness(options: DispatcherHarnessOptions = {}): void {
  settings = { apiKey: API_KEY, valueMicros: 12_340_000, tokenSuffix: 'XyZ', ...options };

  beforeEach(async () => {
    clock = createFakeClock();
    outbox = createMemoryOutbox({ now: clock.now });
    service = await startFakeAdService();
    client = createClient({ baseUrl: service.url, apiKey: settings.apiKey, timeout: 5_000 });
    events = [];
  });

  afterEach(async () => {
    for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop({ timeoutMs: 100 });
    await client.close();
    await service.close();
    await outbox.close();
  });
}

/** Starts a fresh fake service in place of one a test closed, so the tear-down has one to close. */
export async function restartService(): Promise<void> {
  service = await startFakeAdService();
}

export function dispatcherWith(overrides: Partial<DispatcherOptions> = {}): Dispatcher {
  const dispatcher = createDispatcher({
    outbox,
    client,
    now: clock.now,
    random: () => 0.5,
    ...overrides,
  });
  const names = [
    'delivered',
    'retried',
    'dead',
    'expired',
    'paused',
    'resumed',
    'error',
    'account-paused',
    'account-resumed',
    'held',
    'hold-released',
    'switch-seen',
  ] as const;
  for (const name of names) {
    dispatcher.on(name, (payload) => events.push({ name, payload }));
  }
  dispatchers.push(dispatcher);
  return dispatcher;
}

export const eventsNamed = <K extends DispatcherEventName>(name: K) =>
  events.filter((e) => e.name === name).map((e) => e.payload as DispatcherEvents[K]);

export async function enqueue(
  orderId: string,
  clickedAt = clock.now() - HOUR,
  valueMicros = settings.valueMicros,
): Promise<ConfirmJob> {
  const click = { token: `tok_${orderId}_${settings.tokenSuffix}`, clickedAt };
  return (await outbox.confirm({ orderId, valueMicros, click })).job;
}

export const requestsTo = (path: string) => service.requests.filter((r) => r.path === path);

export const confirmRequests = () => requestsTo(CONFIRM_PATH);
