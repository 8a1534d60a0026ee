/**
 * The request log: every `/v1` request the sandbox received, with its time on the sandbox clock, the key
 * that made it (named by account and scope, never by the key itself), and the status it got (`null` when
 * the connection was closed without an answer). A ring of the last `requestLogSize` requests, so a
 * long benchmark keeps a bounded memory; the per-key counters beside it (`ApiKey`) are never dropped.
 */
import type { ApiKey, KeyName } from './state.ts';

/** One `/v1` request as the log keeps it. */
export interface RequestRecord {
  /** Arrival time, epoch ms on the sandbox clock. */
  at: number;
  /** The account and name of the key it carried; `null` for a missing or unknown key. */
  accountId: string | null;
  key: KeyName | null;
  method: string;
  /** The path, without the query string. */
  path: string;
  /** The status answered; `null` when the connection was closed instead (a reset fault). */
  status: number | null;
}

/** Which records {@link RequestLog.list} returns; every given field must match. */
export interface RequestFilter {
  accountId?: string;
  key?: KeyName;
  /** A status, or `null` for the requests answered by closing the connection. */
  status?: number | null;
}

const MAX_PATH = 200;

/**
 * A bounded log of `/v1` requests.
 *
 * @example
 * ```ts
 * const log = new RequestLog(1_000);
 * log.record(Date.now(), undefined, 'GET', '/v1/me', 401);
 * log.list({ status: 401 }).length; // 1
 * ```
 */
export class RequestLog {
  readonly capacity: number;
  #ring: RequestRecord[] = [];
  #next = 0;
  #dropped = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** How many records were dropped to keep the log at its capacity. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Logs one request and counts it on its key (a key the sandbox issued, else only in the log). */
  record(at: number, key: ApiKey | undefined, method: string, path: string, status: number | null): void {
    if (key !== undefined) {
      key.requests += 1;
      key.statuses.set(status, (key.statuses.get(status) ?? 0) + 1);
    }
    if (this.capacity === 0) {
      this.#dropped += 1;
      return;
    }
    const entry: RequestRecord = {
      at,
      accountId: key === undefined ? null : key.accountId,
      key: key === undefined ? null : key.name,
      method,
      path: path.length > MAX_PATH ? path.slice(0, MAX_PATH) : path,
      status,
    };
    if (this.#ring.length < this.capacity) {
      this.#ring.push(entry);
      return;
    }
    this.#ring[this.#next] = entry;
    this.#next = (this.#next + 1) % this.capacity;
    this.#dropped += 1;
  }

  /** The records kept, oldest first, that match `filter`. */
  list(filter: RequestFilter = {}): RequestRecord[] {
    const ordered =
      this.#next === 0 ? this.#ring : [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)];
    return ordered.filter(
      (r) =>
        (filter.accountId === undefined || r.accountId === filter.accountId) &&
        (filter.key === undefined || r.key === filter.key) &&
        (filter.status === undefined || r.status === filter.status),
    );
  }

  /** Empties the log (the per-key counters are cleared by their owner). */
  clear(): void {
    this.#ring = [];
    this.#next = 0;
    this.#dropped = 0;
  }
}
