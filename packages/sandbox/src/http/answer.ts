/**
 * What the `/v1` and control handlers share: splitting the target, reading the Bearer key, and answering
 * an error (`HttpProblem` → `{ detail }`, shaped by the response variants outside `/_sandbox/`; anything
 * else a 500 without internals).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxCore } from '../context.ts';
import { HttpProblem } from '../problem.ts';
import { httpDate } from './date.ts';
import { sendJson, sendProblem, sendWire } from './io.ts';

const NO_QUERY = new URLSearchParams();

/** The path and the parsed query of a request target. */
export function splitUrl(url: string): { path: string; query: URLSearchParams } {
  const q = url.indexOf('?');
  return q === -1
    ? { path: url, query: NO_QUERY }
    : { path: url.slice(0, q), query: new URLSearchParams(url.slice(q + 1)) };
}

/** The key of an `Authorization: Bearer <key>` header (`undefined` for another scheme or none). */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const space = header.indexOf(' ');
  if (space === -1 || header.slice(0, space).toLowerCase() !== 'bearer') return undefined;
  return header.slice(space + 1).trim();
}

/** The status {@link fail} answers `err` with. */
export function failureStatus(err: unknown): number {
  return err instanceof HttpProblem ? err.status : 500;
}

/**
 * Answers an error. `req` is given for answers outside `/_sandbox/`, which response variants may shape
 * (`html-404`, `echo-key`, `extra-fields`); control answers are always the default `{ detail }`.
 */
export function fail(res: ServerResponse, err: unknown, core: SandboxCore, req?: IncomingMessage): void {
  if (res.headersSent || res.destroyed) return;
  const date = httpDate(core.clock.now());
  if (err instanceof HttpProblem) {
    if (core.variants.active && req !== undefined)
      sendWire(res, core.variants.error(err, bearerKey(req.headers.authorization)), date);
    else sendProblem(res, err, date);
    return;
  }
  console.error('[postback sandbox] internal error:', err);
  sendJson(res, 500, { detail: 'internal sandbox error' }, date);
}
