/**
 * Failures of the transport itself, as opposed to failures of a connection: the runtime denies network
 * access (Deno's `NotCapable`/`PermissionDenied`, Node's permission model), the transport's API is not
 * there (Bun's placeholder `undici`, no global `fetch`), or the dispatcher it was given is not one it can
 * use (undici's `InvalidArgumentError`). Sending again can never help, so the client reports them as a
 * `TransportUnavailableError` (a configuration error) instead of a retryable `ConnectionError`.
 */

/**
 * Thrown by a transport that cannot work in this runtime. `maybeSent` says whether the request may
 * nevertheless have left (false when the transport failed before sending anything).
 *
 * @example
 * ```ts
 * if (typeof globalThis.fetch !== 'function') throw new TransportUnavailable('fetch', 'no global fetch', false);
 * ```
 */
export class TransportUnavailable extends Error {
  override name = 'TransportUnavailable';
  /** The transport's name (`undici`, `fetch`). */
  readonly transport: string;
  /** Whether the request may have reached the service before the failure showed. */
  readonly maybeSent: boolean;
  constructor(transport: string, message: string, maybeSent: boolean, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.transport = transport;
    this.maybeSent = maybeSent;
  }
}

/** Error names a runtime gives a denied permission (Deno 2: `NotCapable`; Deno 1: `PermissionDenied`). */
const DENIED_NAMES = new Set(['NotCapable', 'PermissionDenied']);
/**
 * Error codes that no retry can fix: Node's permission model. (undici's invalid-argument error is turned
 * into a {@link TransportUnavailable} by the undici transport itself, so edge bundles carry no undici code.)
 */
const NEVER_CODES = new Set(['ERR_ACCESS_DENIED']);
/**
 * A `TypeError` saying an API is missing (`agent.dispatch is not a function` from a `fetch` given an
 * invalid dispatcher). Nothing fixes it but a change of configuration; when it was thrown cannot be told
 * from outside, so the request counts as maybe sent (never recorded as "never charged").
 */
const MISSING_API = /\bis not a (?:function|constructor)\b/;

/** What {@link transportUnavailable} found: why the transport can never work, and whether anything may have left. */
export interface Unavailability {
  /** One line naming the failure and its cause, e.g. `NotCapable: Requires env access to "X"`. */
  why: string;
  maybeSent: boolean;
  /** The error that says so (the thrown one or one of its causes). */
  cause: unknown;
}

/**
 * Whether `err` (or one of its causes, to a depth of five) says the transport cannot work at all: a
 * {@link TransportUnavailable}, a denied permission or an invalid dispatcher. Null for anything else,
 * including ordinary connection refusals and resets, which stay retryable.
 *
 * @example
 * ```ts
 * transportUnavailable(new Deno.errors.NotCapable('Requires net access to "127.0.0.1:4010"'));
 * // { why: 'NotCapable: Requires net access to "127.0.0.1:4010"', maybeSent: false, cause }
 * ```
 */
export function transportUnavailable(err: unknown): Unavailability | null {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const { name, code, message } = e as { name?: unknown; code?: unknown; message?: unknown };
    const text = typeof message === 'string' ? message : '';
    if (e instanceof TransportUnavailable || name === 'TransportUnavailable') {
      const inner = (e as { cause?: unknown }).cause;
      const innerText = inner instanceof Error ? `: ${inner.name}: ${inner.message}` : '';
      return {
        why: `${text}${innerText}`,
        maybeSent: (e as { maybeSent?: unknown }).maybeSent === true,
        cause: e,
      };
    }
    if (
      (typeof name === 'string' && DENIED_NAMES.has(name)) ||
      (typeof code === 'string' && NEVER_CODES.has(code))
    ) {
      const label = typeof code === 'string' && code !== name ? `${String(name)} (${code})` : String(name);
      return { why: `${label}: ${text}`, maybeSent: false, cause: e };
    }
    if (e instanceof TypeError && MISSING_API.test(text)) {
      return { why: `TypeError: ${text}`, maybeSent: true, cause: e };
    }
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}
