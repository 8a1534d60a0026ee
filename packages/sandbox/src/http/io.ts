/**
 * Reading JSON request bodies and writing JSON answers on plain `node:http`, with the sandbox's limits:
 * bodies up to 1 MiB (413 beyond), bytes that are not UTF-8 and invalid JSON are a 400, an empty body is an
 * empty object.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpProblem } from '../problem.ts';
import type { Body } from '../validate.ts';
import type { WireAnswer } from '../variants.ts';

/** Largest request body accepted (the spec gives no bound: our choice). */
export const MAX_BODY_BYTES = 1_048_576;

/**
 * Reads the whole body and parses it as JSON (an empty body is `{}`), then calls `done` once. A callback
 * rather than a promise: this runs on every s2s confirmation, and the promise and its microtasks showed
 * up in the benchmark profile.
 */
export function readJsonBody(req: IncomingMessage, done: (error: unknown, body?: Body) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (error: unknown, body?: Body): void => {
    if (finished) return;
    finished = true;
    done(error, body);
  };
  req.on('data', (chunk: Buffer) => {
    if (finished) return;
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      finish(new HttpProblem(413, `request body larger than ${MAX_BODY_BYTES} bytes`));
    else chunks.push(chunk);
  });
  req.on('end', () => {
    if (size === 0) return finish(null, {});
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    // JSON is UTF-8 (RFC 8259): decoding other bytes would turn them into U+FFFD, and two different
    // order ids into one.
    if (!isUtf8(bytes)) return finish(new HttpProblem(400, 'body: is not valid UTF-8'));
    const text = bytes.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return finish(new HttpProblem(400, 'body: request body is not valid JSON'));
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return finish(new HttpProblem(400, 'body: must be a JSON object'));
    }
    finish(null, value as Body);
  });
  // The client went away or sent a body the parser refused (answered by the server's clientError handler).
  req.on('error', () => finish(new HttpProblem(400, 'body: the request body was cut off')));
}

/**
 * Writes a JSON answer with an exact `content-length` (keeps keep-alive connections cheap) and `date`
 * (the sandbox clock's, see `date.ts`). Every header goes through `writeHead` at once: a `setHeader` per
 * answer cost about 15% of the server's CPU on the confirmation benchmark.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  date: string,
  headers?: Readonly<Record<string, string>>,
): void {
  const text = JSON.stringify(body);
  const head: Record<string, string | number> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    date,
  };
  if (headers !== undefined) Object.assign(head, headers);
  res.writeHead(status, head);
  res.end(text);
}

/** Answers an error as `{ detail }`. */
export function sendProblem(res: ServerResponse, problem: HttpProblem, date: string): void {
  sendJson(res, problem.status, { detail: problem.detail }, date, problem.headers);
}

/** Writes an answer shaped by a response variant (any content type, possibly an empty body). */
export function sendWire(res: ServerResponse, answer: WireAnswer, date: string): void {
  const head: Record<string, string | number> = { 'content-length': Buffer.byteLength(answer.text), date };
  if (answer.contentType !== null) head['content-type'] = answer.contentType;
  if (answer.headers !== undefined) Object.assign(head, answer.headers);
  res.writeHead(answer.status, head);
  res.end(answer.text);
}
