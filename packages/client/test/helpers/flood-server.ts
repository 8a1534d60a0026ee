/**
 * A real node:http server that answers every request with a runaway body: a head, then padding written
 * chunk by chunk (waiting for the socket to drain, so the server holds one chunk at a time) until a
 * bounded total is written or the client closes the connection. It records how much it wrote and whether
 * the connection closed before the end: the proof that a client stopped reading.
 */
import { createServer, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FloodAnswer {
  status: number;
  headers?: OutgoingHttpHeaders;
  /** Text written first (e.g. `{"pad":"`). */
  head: string;
  /** Total bytes of padding to write at most (the loop's bound). */
  padBytes: number;
  /** One chunk of padding, repeated. @defaultValue 64 KiB of `a` */
  chunk?: string;
  /** Text written last, when the padding was all written. @defaultValue `"}` */
  tail?: string;
}

export interface FloodServer {
  url: string;
  /** Bytes written so far (head and padding) over all requests. */
  written(): number;
  /** Resolves when the answer of the latest request ended: `cutShort` when the client closed it first. */
  ended(): Promise<{ cutShort: boolean }>;
  close(): Promise<void>;
}

/** Starts a server answering every request with `answer`. */
export async function startFloodServer(answer: FloodAnswer): Promise<FloodServer> {
  const chunk = Buffer.from(answer.chunk ?? 'a'.repeat(64 * 1024));
  const sockets = new Set<Socket>();
  let written = 0;
  let ended: Promise<{ cutShort: boolean }> = new Promise(() => {});
  const server = createServer((req, res) => {
    req.resume();
    ended = new Promise((resolve) => {
      let closed = false;
      res.on('close', () => {
        closed = true;
      });
      res.writeHead(answer.status, answer.headers);
      res.write(answer.head);
      written += Buffer.byteLength(answer.head);
      void (async () => {
        for (let sent = 0; sent < answer.padBytes && !closed; sent += chunk.length) {
          const more = res.write(chunk);
          written += chunk.length;
          if (!more) {
            await new Promise<void>((drained) => {
              const done = () => {
                res.off('drain', done);
                res.off('close', done);
                drained();
              };
              res.on('drain', done);
              res.on('close', done);
            });
          }
        }
        if (closed) return resolve({ cutShort: true });
        res.end(answer.tail ?? '"}', () => resolve({ cutShort: false }));
      })();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    written: () => written,
    ended: () => ended,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Runs `work` while sampling this process's heap and external memory every 10 ms: the growth of the
 * highest sample over the first, in bytes, and `work`'s outcome.
 */
export async function peakMemoryGrowth<T>(
  work: () => Promise<T>,
): Promise<{ growth: number; result: PromiseSettledResult<T> }> {
  const sample = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external + m.arrayBuffers;
  };
  const start = sample();
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, sample());
  }, 10);
  const [result] = await Promise.allSettled([work()]);
  clearInterval(timer);
  peak = Math.max(peak, sample());
  return { growth: peak - start, result: result as PromiseSettledResult<T> };
}
