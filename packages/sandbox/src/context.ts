/**
 * What a request handler gets: the sandbox's state, clock and options, and for `/v1` the caller's
 * account. Handlers return an {@link Answer} or throw an `HttpProblem`; they never touch the socket.
 */
import type { SandboxClock } from './clock.ts';
import type { FaultInjector } from './faults.ts';
import type { ResolvedSandboxOptions } from './options.ts';
import type { RequestLog } from './request-log.ts';
import type { Account, SandboxState, Scope } from './state.ts';
import type { Body } from './validate.ts';
import type { VariantSet } from './variants.ts';

/** The parts of a running sandbox that handlers share. */
export interface SandboxCore {
  state: SandboxState;
  clock: SandboxClock;
  faults: FaultInjector;
  /** The response variants in effect. */
  variants: VariantSet;
  /** Every `/v1` request and the status it got (the last `requestLogSize`). */
  requests: RequestLog;
  options: ResolvedSandboxOptions;
}

/** One request as a handler sees it. */
export interface RequestContext {
  core: SandboxCore;
  /** The JSON body (an empty object when there is none). */
  body: Body;
  query: URLSearchParams;
  /** Path parameters in order, e.g. `[site_id]`. */
  params: string[];
  /** Sandbox time of the request, read once so one request sees one instant. */
  now: number;
}

/** A `/v1` request of an authenticated key. */
export interface V1Context extends RequestContext {
  account: Account;
  scopes: readonly Scope[];
  /** The bearer key of the request. A secret: only the `refuse-key` variant ever puts it in an answer. */
  apiKey: string;
}

/** A response: status and JSON body. */
export interface Answer {
  status: number;
  body: unknown;
}

export function ok(body: unknown, status = 200): Answer {
  return { status, body };
}
