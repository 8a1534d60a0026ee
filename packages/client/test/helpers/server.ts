/**
 * A real node:http server on an ephemeral 127.0.0.1 port for client tests: records every request it
 * receives (so a test can prove nothing was sent) and counts TCP connections (to prove keep-alive).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the server saw it. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

export type Handler = (req: SeenRequest, res: ServerResponse, index: number) => void | Promise<void>;

export interface TestServer {
  url: string;
  requests: SeenRequest[];
  connections: () => number;
  close(): Promise<void>;
}

/** Starts a server answering with `handler`; `close()` also destroys kept-alive and hanging sockets. */
export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      let json: unknown;
      try {
        json = body === '' ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
      requests.push(seen);
      // A handler that throws resets the connection: the way tests simulate a dropped request.
      (async () => handler(seen, res, requests.length - 1))().catch(() => {
        res.socket?.destroy();
      });
    });
  });
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Writes a JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
