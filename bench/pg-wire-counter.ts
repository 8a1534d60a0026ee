/**
 * A counting TCP proxy in front of PostgreSQL, for the worker profile (`postgres-profile.ts`): it passes
 * every byte through unchanged and reads the wire protocol on the way, so a client can be measured without
 * `pg_stat_statements` (which needs `shared_preload_libraries` and a server restart). It counts round trips
 * (a simple `Query` or an extended-protocol `Sync`: each is answered by one `ReadyForQuery`), statements
 * executed by kind (the first words of their text; a `PREPARE`d or named statement counts under its own
 * text), the rows each kind's command tags report, and the `NotificationResponse`s (LISTEN/NOTIFY wake-ups)
 * delivered to the client. Plain TCP only (the client must not ask for TLS).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** Per statement kind: how many ran, the rows their command tags reported, and how many reported none. */
export interface StatementCount {
  executed: number;
  rows: number;
  empty: number;
}

export interface WireCounts {
  connections: number;
  roundTrips: number;
  notifications: number;
  statements: Map<string, StatementCount>;
}

export interface WireCounter {
  /** The port to connect to on 127.0.0.1 instead of the server's. */
  port: number;
  counts: WireCounts;
  /** Zeroes the counts (the open connections and the statement names they prepared are kept). */
  reset(): void;
  close(): Promise<void>;
}

/** A statement's kind: its whitespace collapsed, the first 72 characters (a CTE names its first part). */
export function kindOf(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 72);
}

/** Splits a framed stream into [type, body] messages; `startup` skips the untyped startup message. */
function framer(onMessage: (type: number, body: Buffer) => void, startup: boolean) {
  let pending: Buffer = Buffer.alloc(0);
  let awaitingStartup = startup;
  return (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      if (awaitingStartup) {
        if (pending.length < 4) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        pending = pending.subarray(length);
        awaitingStartup = false;
        continue;
      }
      if (pending.length < 5) return;
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      onMessage(pending[0]!, pending.subarray(5, 1 + length));
      pending = pending.subarray(1 + length);
    }
  };
}

const cstring = (body: Buffer, at: number): [string, number] => {
  const end = body.indexOf(0, at);
  return [body.toString('utf8', at, end), end + 1];
};

/** Starts the proxy to `target` (host, port) on an ephemeral port of 127.0.0.1. */
export async function startWireCounter(target: { host: string; port: number }): Promise<WireCounter> {
  const counts: WireCounts = { connections: 0, roundTrips: 0, notifications: 0, statements: new Map() };
  const sockets = new Set<Socket>();
  const count = (kind: string, rows: number) => {
    const entry = counts.statements.get(kind) ?? { executed: 0, rows: 0, empty: 0 };
    entry.executed += 1;
    entry.rows += rows;
    if (rows === 0) entry.empty += 1;
    counts.statements.set(kind, entry);
  };
  const server: Server = createServer((client) => {
    counts.connections += 1;
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    /** Statement name → kind, for this connection (`pg` named statements and SQL PREPARE). */
    const named = new Map<string, string>();
    /** The kinds sent and not yet answered, in order. */
    const awaiting: string[] = [];
    let bound = '';
    const fromClient = framer((type, body) => {
      const letter = String.fromCharCode(type);
      if (letter === 'Q') {
        counts.roundTrips += 1;
        const [text] = cstring(body, 0);
        for (const statement of text.split(/;\n/)) {
          const prepare = /^\s*PREPARE (\w+) AS ([\s\S]*)$/.exec(statement);
          if (prepare) named.set(prepare[1]!, kindOf(prepare[2]!));
          const execute = /^\s*EXECUTE (\w+)\(/.exec(statement);
          awaiting.push(execute ? (named.get(execute[1]!) ?? statement) : kindOf(statement));
        }
      } else if (letter === 'P') {
        const [name, next] = cstring(body, 0);
        const [text] = cstring(body, next);
        if (name !== '') named.set(name, kindOf(text));
        else bound = kindOf(text);
      } else if (letter === 'B') {
        const [, next] = cstring(body, 0);
        const [statement] = cstring(body, next);
        if (statement !== '') bound = named.get(statement) ?? statement;
      } else if (letter === 'E') awaiting.push(bound);
      else if (letter === 'S') counts.roundTrips += 1;
    }, true);
    const fromServer = framer((type, body) => {
      const letter = String.fromCharCode(type);
      if (letter === 'A') counts.notifications += 1;
      else if (letter === 'C') {
        const [tag] = cstring(body, 0);
        const rows = Number(/ (\d+)$/.exec(tag)?.[1] ?? 0);
        count(awaiting.shift() ?? '(unknown)', rows);
      } else if (letter === 'I' || letter === 'E') awaiting.shift();
      else if (letter === 'Z') awaiting.length = 0;
    }, false);
    client.on('data', (chunk: Buffer) => {
      fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      fromServer(chunk);
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port');
  return {
    port: address.port,
    counts,
    reset() {
      counts.connections = 0;
      counts.roundTrips = 0;
      counts.notifications = 0;
      counts.statements.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
