/**
 * A scripted stand-in for the ad service's two conversion endpoints, on a real HTTP server (127.0.0.1,
 * ephemeral port), for Dispatcher tests: queue the statuses each path should answer, count and inspect
 * the requests that arrived. Unscripted requests get a valid success body of the agreed wire shape.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer. */
export interface ScriptedAnswer {
  status: number;
  /** JSON body (a string is sent raw, e.g. to send malformed JSON). @defaultValue a success body or `{ detail }` */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (a slow service). */
  delayMs?: number;
}

/** A request as it arrived. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  at: number;
}

export interface FakeAdService {
  /** Base URL to give the client. */
  url: string;
  requests: RecordedRequest[];
  /** Most requests in flight at once so far. */
  maxConcurrent: number;
  /** Queues answers for a path (`/v1/conversions/s2s` or `/v1/conversions/s2s/refund`), used in order. */
  script(path: string, ...answers: ScriptedAnswer[]): void;
  /**
   * Answers every request sent with one of these keys (`Authorization: Bearer <key>`) with a 401 whose
   * `detail` echoes the key (a careless service), until the key is taken out of the set again.
   */
  readonly revokedKeys: Set<string>;
  /** Runs on each request before it is answered (e.g. to move a fake clock). */
  onRequest(hook: (request: RecordedRequest) => void): void;
  /** Resolves once `count` requests have arrived (bounded by `timeoutMs`). */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export const CONFIRM_PATH = '/v1/conversions/s2s';
export const REFUND_PATH = '/v1/conversions/s2s/refund';

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  } catch {
    return {};
  }
}

function successBody(path: string, body: Record<string, unknown>, campaignId: string): unknown {
  const at = new Date().toISOString();
  if (path === REFUND_PATH) {
    return {
      order_id: body.order_id,
      campaign_id: body.campaign_id,
      status: 'reversed',
      reversed_at: at,
      duplicate: false,
    };
  }
  return {
    order_id: body.order_id,
    campaign_id: campaignId,
    value_micros: body.value_micros,
    status: 'confirmed',
    confirmed_at: at,
    duplicate: false,
  };
}

/**
 * Starts the fake service.
 *
 * @example
 * ```ts
 * const service = await startFakeAdService();
 * service.script(CONFIRM_PATH, { status: 503 }, { status: 200 });
 * ```
 */
export async function startFakeAdService(options: { campaignId?: string } = {}): Promise<FakeAdService> {
  const campaignId = options.campaignId ?? 'cmp_from_service';
  const scripts = new Map<string, ScriptedAnswer[]>();
  const hooks: Array<(request: RecordedRequest) => void> = [];
  const waiters = new Set<() => boolean>();
  let concurrent = 0;

  const service: FakeAdService = {
    url: '',
    requests: [],
    maxConcurrent: 0,
    revokedKeys: new Set(),
    script(path, ...answers) {
      scripts.set(path, [...(scripts.get(path) ?? []), ...answers]);
    },
    onRequest(hook) {
      hooks.push(hook);
    },
    waitForRequests(count, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${service.requests.length} of ${count} requests arrived`)),
          timeoutMs,
        );
        const check = () => {
          if (service.requests.length >= count) {
            clearTimeout(timer);
            resolve();
            return true;
          }
          return false;
        };
        if (!check()) waiters.add(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    concurrent += 1;
    service.maxConcurrent = Math.max(service.maxConcurrent, concurrent);
    try {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body = await readJson(req);
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        body,
        at: Date.now(),
      };
      service.requests.push(recorded);
      for (const hook of hooks) hook(recorded);
      for (const waiter of [...waiters]) if (waiter()) waiters.delete(waiter);
      const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const answer: ScriptedAnswer =
        key !== undefined && service.revokedKeys.has(key)
          ? { status: 401, body: { detail: `API key ${key} has been revoked` } }
          : (scripts.get(path)?.shift() ?? { status: 200 });
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (res.destroyed) return;
      const payload =
        answer.body !== undefined
          ? answer.body
          : answer.status < 300
            ? successBody(path, body, campaignId)
            : { detail: `scripted ${answer.status}` };
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    } finally {
      concurrent -= 1;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  service.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return service;
}
