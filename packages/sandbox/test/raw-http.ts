/**
 * One HTTP exchange over a raw TCP socket, for requests `fetch` refuses to send (a bad target, a bad
 * method, a body cut off, headers over the limit): the bytes go out as written, and the first answer is
 * read back and parsed (status line, headers, a `content-length` body).
 */
import { connect } from 'node:net';

/** A parsed answer; `body` is the raw text of its `content-length` bytes. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `request` (latin1 bytes) to `127.0.0.1:port` and resolves with the first answer, or `null` when the
 * connection closed without one. `end: true` half-closes after sending (a client that is done sending);
 * `destroy: true` drops the connection right after sending (a client that went away).
 */
export function exchange(
  port: number,
  request: string | Buffer,
  options: { end?: boolean; destroy?: boolean; timeoutMs?: number } = {},
): Promise<RawAnswer | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let settled = false;
    const settle = (answer: RawAnswer | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(
      () => reject(new Error(`no answer within ${options.timeoutMs ?? 5_000} ms`)),
      options.timeoutMs ?? 5_000,
    );
    const parse = (): RawAnswer | undefined => {
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return undefined;
      const [statusLine = '', ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (received.length < end + 4 + length) return undefined;
      return {
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: received.subarray(end + 4, end + 4 + length).toString('utf8'),
      };
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = parse();
      if (answer !== undefined) settle(answer);
    });
    socket.on('error', () => settle(parse() ?? null));
    socket.on('close', () => settle(parse() ?? null));
    const bytes = typeof request === 'string' ? Buffer.from(request, 'latin1') : request;
    socket.write(bytes, () => {
      if (options.destroy) settle(null);
      else if (options.end) socket.end();
    });
  });
}
