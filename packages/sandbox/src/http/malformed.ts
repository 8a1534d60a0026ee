/**
 * Malformed requests get a JSON `{ detail }` 4xx like every other refusal, and the server keeps serving:
 * what the HTTP parser refuses (a bad method or header, headers over the size limit, a body cut off or
 * badly chunked), a request still unfinished when the server times it out, `Expect` values other than
 * `100-continue`, and `CONNECT`. Node's own answers to these are bare statuses without a body or a sandbox
 * `Date`; a client that reads every error as JSON (as a client of the service should) would read nothing.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SandboxClock } from '../clock.ts';
import { httpDate } from './date.ts';
import { sendJson } from './io.ts';

/** The status for an error of Node's HTTP parser: 431 for headers too large, 408 for a timeout, else 400. */
function statusOf(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

function detailOf(status: number, code: string | undefined): string {
  if (status === 431) return 'request headers too large';
  if (status === 408) return 'request not received in time';
  return `malformed HTTP request${code?.startsWith('HPE_') ? ` (${code})` : ''}`;
}

/** A whole answer written straight to the socket (there is no `ServerResponse` to write it with). */
function rawAnswer(status: number, detail: string, date: string, headers = ''): string {
  const body = JSON.stringify({ detail });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `date: ${date}\r\n${headers}connection: close\r\n\r\n${body}`
  );
}

/**
 * Installs the answers to malformed requests on a sandbox's server.
 *
 * @example
 * ```ts
 * answerMalformedRequests(server, core.clock);
 * ```
 */
export function answerMalformedRequests(server: Server, clock: SandboxClock): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = statusOf(error.code);
    const detail = detailOf(status, error.code);
    // A request whose head was read (its body is what failed) has a response in flight: answer with it,
    // so the handler waiting for the body finds it answered; once its head is out, only closing is left.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight !== undefined && inFlight !== null) {
      if (inFlight.headersSent) socket.destroy();
      else sendJson(inFlight, status, { detail }, httpDate(clock.now()), { connection: 'close' });
      return;
    }
    socket.end(rawAnswer(status, detail, httpDate(clock.now())));
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const detail = 'Expect: only 100-continue is supported';
    sendJson(res, 417, { detail }, httpDate(clock.now()), { connection: 'close' });
    req.resume();
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    socket.end(
      rawAnswer(405, 'method CONNECT not allowed', httpDate(clock.now()), 'allow: GET, POST, DELETE\r\n'),
    );
  });
}
