/**
 * What the metrics tests share: a sandbox world, a memory outbox with `jobs` confirmations queued for
 * its clicks, and a Dispatcher delivering them with a real client.
 */
import { createClient } from '@postback/client';
import {
  createDispatcher,
  createMemoryOutbox,
  type Dispatcher,
  type DispatcherOptions,
  type Outbox,
} from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';

export interface DeliveryWorld {
  world: SandboxWorld;
  outbox: Outbox;
  dispatcher: Dispatcher;
  tokens: string[];
  apiKey: string;
  /** Queues confirmations `prefix-0` … for the world's clicks (of `account` when given). */
  enqueue(count: number, prefix: string, account?: string): Promise<void>;
  close(): Promise<void>;
}

export interface DeliveryWorldOptions {
  authPauseMs?: number;
  /** One key per account (the Dispatcher's `apiKeyFor`); `validKey` is the sandbox's conversions key. */
  apiKeyFor?: (account: string | null, validKey: string) => string | undefined;
  /** More Dispatcher options (`tracing`, `backoff`). */
  dispatcher?: Pick<DispatcherOptions, 'tracing' | 'backoff'>;
  /** Wraps the client's `fetch` (to see the requests as sent). */
  fetch?: typeof globalThis.fetch;
}

export async function startDeliveryWorld(options: DeliveryWorldOptions = {}): Promise<DeliveryWorld> {
  const world = await startSandboxWorld();
  const clicks = await world.clicks(3);
  const outbox = createMemoryOutbox();
  const client = createClient({
    baseUrl: world.url,
    apiKey: world.conversionsKey,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const given = options.apiKeyFor;
  const apiKeyFor: DispatcherOptions['apiKeyFor'] =
    given === undefined ? undefined : (account) => given(account, world.conversionsKey);
  const dispatcher = createDispatcher({
    outbox,
    client,
    concurrency: 4,
    pollIntervalMs: 10,
    ...(options.authPauseMs === undefined ? {} : { authPauseMs: options.authPauseMs }),
    ...(apiKeyFor === undefined ? {} : { apiKeyFor }),
    ...options.dispatcher,
  });
  return {
    world,
    outbox,
    dispatcher,
    tokens: clicks.map((c) => c.token),
    apiKey: world.conversionsKey,
    async enqueue(count, prefix, account) {
      for (let i = 0; i < count; i++) {
        const click = clicks[i % clicks.length] as { token: string; clickedAt: number };
        await outbox.confirm({
          orderId: `${prefix}-${i}`,
          valueMicros: 1_000,
          click,
          ...(account === undefined ? {} : { account }),
        });
      }
    },
    async close() {
      await dispatcher.stop({ timeoutMs: 1_000 });
      await client.close();
      await outbox.close();
      await world.close();
    },
  };
}

/** Prometheus text as `name{labels}` → value (labels as written, in their order). */
export function parsePrometheusText(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}
