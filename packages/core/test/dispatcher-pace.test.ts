/**
 * The adaptive pace with a real busy host: the test busy-loops this process's event loop (the one the
 * Dispatcher runs on, as in a shop's own process), and the client it is given counts its sends in flight
 * as each begins (the service, on the same busy loop, answers after a delay or holds requests). Busy: the Dispatcher comes down to one send at a time; idle again: back to
 * `concurrency`; a job within an hour of its deadline is sent while busy even though the one slot the
 * pace allows is taken. No figure is timed: each step waits (boundedly) for what it expects.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AdServiceClient, createClient } from '@postback/client';
import {
  type ConversionsClient,
  createDispatcher,
  createMemoryOutbox,
  type Dispatcher,
  type Outbox,
} from '@postback/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A service answering each confirmation after `delayMs`, or holding those `hold` names until released. */
interface Service {
  url: string;
  /** The order ids of the requests that arrived, in order. */
  arrived: string[];
  delayMs: number;
  hold: (order: string) => boolean;
  releaseHeld(): void;
  /** Requests held now. */
  holding(): number;
  close(): Promise<void>;
}

async function startService(): Promise<Service> {
  const held: Array<() => void> = [];
  const service: Service = {
    url: '',
    arrived: [],
    delayMs: 2,
    hold: () => false,
    holding: () => held.length,
    releaseHeld: () => {
      for (const answer of held.splice(0)) answer();
    },
    close: () =>
      new Promise((resolve) => {
        service.releaseHeld();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const order = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).order_id);
      service.arrived.push(order);
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      };
      if (service.hold(order)) held.push(answer);
      else setTimeout(answer, service.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  service.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return service;
}

/** Keeps this process's event loop busy (25 ms of computing per turn) until the returned function is called. */
function busyLoop(): () => void {
  let on = true;
  const turn = () => {
    if (!on) return;
    const end = performance.now() + 25;
    while (performance.now() < end) {
      // computing: the host is busy
    }
    setImmediate(turn);
  };
  setImmediate(turn);
  return () => {
    on = false;
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let service: Service;
let outbox: Outbox;
let dispatcher: Dispatcher | undefined;
let stopBusy: () => void = () => {};
const clients: AdServiceClient[] = [];
/** The sends the Dispatcher began: how many were in flight then (itself included), and the order. */
let sends: Array<{ order: string; inFlight: number }>;

/** The real client, counting the sends in flight. */
function client(): ConversionsClient {
  const real = createClient({ baseUrl: service.url, apiKey: 'pbsk_test_pace', timeout: 30_000 });
  clients.push(real);
  let inFlight = 0;
  return {
    conversions: {
      async confirm(body, options) {
        inFlight += 1;
        sends.push({ order: body.order_id, inFlight });
        try {
          return await real.conversions.confirm(body, options);
        } finally {
          inFlight -= 1;
        }
      },
      refund: (body, options) => real.conversions.refund(body, options),
    },
  };
}

/** Each of the last `n` sends began alone. */
const lastAlone = (n: number) => sends.length >= n && sends.slice(-n).every((send) => send.inFlight === 1);

async function enqueue(order: string, clickedAt = Date.now() - HOUR): Promise<void> {
  await outbox.confirm({ orderId: order, valueMicros: 1_000, click: { token: `tok_${order}`, clickedAt } });
}

beforeEach(async () => {
  sends = [];
  service = await startService();
  outbox = createMemoryOutbox();
});

afterEach(async () => {
  stopBusy();
  await dispatcher?.stop({ timeoutMs: 1_000 });
  dispatcher = undefined;
  for (const real of clients.splice(0)) await real.close();
  await service.close();
  await outbox.close();
});

describe('Dispatcher pace (adaptive) on a busy host', () => {
  it('sends one at a time while the event loop is busy, and `concurrency` at once again when it is idle', async () => {
    for (let i = 0; i < 3_000; i++) await enqueue(`ord_${i}`);
    service.delayMs = 20; // sends overlap when nothing holds them back
    dispatcher = createDispatcher({ outbox, client: client(), concurrency: 4 });
    stopBusy = busyLoop();
    dispatcher.start();
    await until(() => lastAlone(20), 'one send at a time while busy');
    stopBusy();
    const from = sends.length;
    await until(() => sends.slice(from).some((send) => send.inFlight === 4), 'four at once when idle');
  }, 60_000);

  it("`pace: 'off'` keeps `concurrency` in flight on a busy host", async () => {
    for (let i = 0; i < 200; i++) await enqueue(`ord_${i}`);
    service.delayMs = 20;
    dispatcher = createDispatcher({ outbox, client: client(), concurrency: 4, pace: 'off' });
    stopBusy = busyLoop();
    dispatcher.start();
    await until(() => sends.length >= 60, '60 sends');
    expect(sends.slice(20, 60).filter((send) => send.inFlight === 4).length).toBeGreaterThan(20);
  }, 60_000);

  it('sends a job within an hour of its deadline while busy, past the one slot the pace allows', async () => {
    // Fewer jobs than are claimed ahead, so the loop claims again (and finds the urgent job) at once.
    for (let i = 0; i < 30; i++) await enqueue(`ord_${i}`);
    dispatcher = createDispatcher({ outbox, client: client(), concurrency: 4, pollIntervalMs: 20 });
    stopBusy = busyLoop();
    dispatcher.start();
    await until(() => lastAlone(6), 'one send at a time while busy');
    // From now on every request is held: the one slot stays taken (by the next of the 30, or by one more).
    service.hold = () => true;
    await enqueue('filler');
    dispatcher.wake();
    await until(() => service.holding() > 0, 'a held request');
    const heldSends = sends.length;
    // A confirmation whose window closes in 30 minutes (deadline: click + 7 days − 1 hour), and one not due
    // for days: only the urgent one goes.
    await enqueue('urgent', Date.now() - 7 * DAY + HOUR + 30 * 60_000);
    dispatcher.wake();
    await until(() => sends.some((send) => send.order === 'urgent'), 'the urgent job sent');
    expect(sends.find((send) => send.order === 'urgent')?.inFlight).toBe(2); // beside the held one
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sends.slice(heldSends).map((send) => send.order)).toEqual(['urgent']);
  }, 60_000);
});
