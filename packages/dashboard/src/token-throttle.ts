/**
 * Throttling of wrong tokens, per client address, in a table of bounded size. After `maxFailures` wrong
 * tokens from one address, that address is locked out for `lockoutMs`, doubled at each lock-out in a
 * row (at most 64 times): during a lock-out every token it sends is refused, the right one too, so
 * guessing costs time whatever the guesses. A right token ends the address's record.
 *
 * Addresses are keyed by IPv4 address, or by the /64 prefix of an IPv6 address (one host usually holds a
 * whole /64). The table holds at most {@link TOKEN_THROTTLE_MAX_CLIENTS} addresses; records idle for
 * an hour (and not locked) are dropped first, and when every slot is in use, new addresses share one
 * overflow record, so a guesser with many addresses is throttled as one client instead of pushing the
 * others out.
 */

/**
 * Most client addresses the token throttle keeps a record of.
 * @defaultValue 10_000
 */
export const TOKEN_THROTTLE_MAX_CLIENTS = 10_000;

/** A record idle (no wrong token, no lock-out running) this long is forgotten. */
const IDLE_MS = 3_600_000;
/** Longest lock-out, as a multiple of `lockoutMs`. */
const MAX_LOCKOUT_FACTOR = 64;
const OVERFLOW = '(overflow)';

interface ClientRecord {
  failures: number;
  lockouts: number;
  lockedUntil: number;
  lastAt: number;
}

/** The key of a client address: the IPv4 address, an IPv6 address's /64, or '' when unknown. */
export function clientKey(address: string | undefined): string {
  if (address === undefined || address === '') return '';
  const a = address
    .toLowerCase()
    .replace(/%.*$/, '')
    .replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (!a.includes(':')) return a;
  const [head = '', tail = ''] = a.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = a.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** A token throttle; see the module's description. */
export interface TokenThrottle {
  /** Milliseconds the address is still locked out for, or 0. */
  lockedFor(address: string | undefined): number;
  /** A wrong token from `address`. */
  failed(address: string | undefined): void;
  /** The right token from `address`. */
  succeeded(address: string | undefined): void;
  /** How many records the table holds: at most `maxClients`, plus the shared overflow record. */
  readonly size: number;
}

/**
 * Creates a token throttle.
 *
 * @example
 * ```ts
 * const throttle = createTokenThrottle({ maxFailures: 10, lockoutMs: 60_000, now: Date.now });
 * if (throttle.lockedFor(address) > 0) return tooManyAttempts();
 * ```
 */
export function createTokenThrottle(options: {
  maxFailures: number;
  lockoutMs: number;
  now: () => number;
  maxClients?: number;
}): TokenThrottle {
  const { maxFailures, lockoutMs, now } = options;
  const maxClients = options.maxClients ?? TOKEN_THROTTLE_MAX_CLIENTS;
  /** In order of last change (a changed record is moved to the end), so the idlest come first. */
  const table = new Map<string, ClientRecord>();

  const idle = (r: ClientRecord, at: number) => r.lockedUntil <= at && at - r.lastAt > IDLE_MS;

  /** The key a record is kept under: the client's, or the shared overflow record when the table is full. */
  function slot(address: string | undefined, at: number): string {
    const key = clientKey(address);
    if (table.has(key) || table.size < maxClients) return key;
    for (const [k, r] of table) {
      if (!idle(r, at)) break;
      table.delete(k);
    }
    return table.size < maxClients ? key : OVERFLOW;
  }

  return {
    lockedFor(address) {
      const key = clientKey(address);
      // An address without a record of its own shares the overflow record while the table is full.
      const record = table.get(key) ?? (table.size >= maxClients ? table.get(OVERFLOW) : undefined);
      return record === undefined ? 0 : Math.max(0, record.lockedUntil - now());
    },
    failed(address) {
      const at = now();
      const key = slot(address, at);
      const record = table.get(key) ?? { failures: 0, lockouts: 0, lockedUntil: 0, lastAt: at };
      table.delete(key);
      if (record.lockedUntil <= at && at - record.lastAt > IDLE_MS)
        Object.assign(record, { failures: 0, lockouts: 0 });
      record.failures += 1;
      record.lastAt = at;
      if (record.failures >= maxFailures) {
        record.failures = 0;
        record.lockouts += 1;
        record.lockedUntil = at + lockoutMs * Math.min(MAX_LOCKOUT_FACTOR, 2 ** (record.lockouts - 1));
      }
      table.set(key, record);
    },
    succeeded(address) {
      table.delete(clientKey(address));
    },
    get size() {
      return table.size;
    },
  };
}
