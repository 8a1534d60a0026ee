/**
 * The shop of `shop-under-delivery.ts`, in a child process of its own: the example Express shop (its
 * capture middleware and landing page, configured from an env-like object by the shop kit's
 * `readShopConfig`) with an in-process Dispatcher, its SQLite outbox and its client, as `openShopBackend`
 * sets them up (Dispatcher defaults), built as one of `SETUPS` says.
 *
 * `startShopChild` starts it: the child serves the shop on an ephemeral loopback port, prints the port,
 * then answers one line of JSON per command on stdin (`open <setup> <jobs> <prefix>`: a fresh outbox with
 * a backlog; `deliver <on|off>`: start or stop delivering it; `drain`: deliver it all; `close`); each
 * answer says what the shop spent since the previous one. It exits when stdin closes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createClient } from '@postback/client';
import { createDispatcher, type Dispatcher } from '@postback/core';
import { readShopConfig, renderLandingPage } from '@postback/example-shop-kit';
import { postback } from '@postback/express';
import { createSqliteOutbox, type SqliteOutbox, type SqliteOutboxOptions } from '@postback/sqlite';
import express from 'express';
import { withinLimit } from './run-world.ts';

/** A way to build the shop's backend, compared side by side with the others. */
export interface Setup {
  label: string;
  outbox: Omit<SqliteOutboxOptions, 'filename'>;
  dispatcher?: Omit<Parameters<typeof createDispatcher>[0], 'outbox' | 'client'>;
}

/**
 * The setups `shop-under-delivery.ts` measures side by side (`--setups` picks some). Issue 24 compared the
 * outbox's writer thread with `synchronous: 'full-async'` here (packages/sqlite/README.md, "Keeping the
 * fsync off the event loop"), issue 25 the Dispatcher's pace; add an entry to compare another backend or
 * Dispatcher setting.
 */
export const SETUPS: Record<string, Setup> = {
  default: {
    label: "the outbox's and the Dispatcher's defaults (writer thread, synchronous 'full'; pace 'adaptive')",
    outbox: {},
  },
  // Issue 25: the Dispatcher at full speed whatever the pages, as before its adaptive pace.
  'pace-off': {
    label: "the same with the Dispatcher's pace 'off' (as before issue 25)",
    outbox: {},
    dispatcher: { pace: 'off' },
  },
};

/** Longest one command of the shop child (filling a backlog, draining it, stopping a Dispatcher) may take. */
const COMMAND_LIMIT_MS = 90_000;

/** What the shop did since the last command that answered with it. */
export interface Spent {
  delivered: number;
  /** CPU of the shop's main thread (its event loop), µs. */
  loopCpuUs: number;
  /** CPU of all the shop process's threads, µs. */
  processCpuUs: number;
  ms: number;
}

async function serveShop(): Promise<void> {
  const config = readShopConfig(process.env);
  const tokens = (process.env.BENCH_CLICK_TOKENS ?? '').split(',');
  const dir = mkdtempSync(join(tmpdir(), 'postback-shop-bench-'));
  const client = createClient({ baseUrl: config.apiUrl, apiKey: config.apiKey });

  // The example shop's page route (examples/express-shop/src/shop.ts), capture on every page.
  const app = express();
  app.disable('x-powered-by');
  app.use(postback({ secrets: [config.secret], param: config.clickParam, secure: config.secureCookie }));
  app.get('/', async (req, res) => {
    const click = await req.postback.click();
    res.type('html').send(renderLandingPage({ shop: 'Express', clicked: click !== null }));
  });
  const server = app.listen(config.port, config.host);
  await new Promise((resolve) => server.once('listening', resolve));

  let outbox: { store: SqliteOutbox; file: string; jobs: number; setup: Setup } | null = null;
  let dispatcher: Dispatcher | null = null;
  let delivered = 0;
  let onDelivered = () => {};
  const mark = () => {
    const loop = process.threadCpuUsage();
    const all = process.cpuUsage();
    return { delivered, loop: loop.user + loop.system, all: all.user + all.system, at: performance.now() };
  };
  let since = mark();
  /** What was spent since the previous call. */
  const spent = (): Spent => {
    const now = mark();
    const result = {
      delivered: now.delivered - since.delivered,
      loopCpuUs: now.loop - since.loop,
      processCpuUs: now.all - since.all,
      ms: now.at - since.at,
    };
    since = now;
    return result;
  };
  const startDelivery = () => {
    const { store, setup } = outbox as NonNullable<typeof outbox>;
    dispatcher = createDispatcher({ ...setup.dispatcher, outbox: store, client });
    dispatcher.on('delivered', () => {
      delivered += 1;
      onDelivered();
    });
    const fail = (what: string) => () => {
      console.error(`shop child: a job ${what}`);
      process.exit(1);
    };
    dispatcher.on('dead', fail('went dead'));
    dispatcher.on('paused', fail('paused delivery'));
    dispatcher.start();
  };
  const stopDelivery = async () => {
    await dispatcher?.stop({ timeoutMs: 5_000 });
    dispatcher = null;
  };
  const commands: Record<string, (args: string[]) => Promise<unknown>> = {
    async open([name, jobs, prefix]) {
      const setup = SETUPS[name as string];
      if (setup === undefined) throw new Error(`unknown setup ${name}`);
      const file = join(dir, `${prefix}.db`);
      const store = createSqliteOutbox({ ...setup.outbox, filename: file });
      const count = Number(jobs);
      const clickedAt = Date.now();
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          store.confirm({
            orderId: `${prefix}-${i}`,
            valueMicros: 1_000,
            click: { token: tokens[i % tokens.length] as string, clickedAt },
          }),
        ),
      );
      outbox = { store, file, jobs: count, setup };
      delivered = 0;
      return spent();
    },
    async deliver([on]) {
      const before = spent(); // the window that ends now
      if (on !== 'on') await stopDelivery();
      else if (dispatcher === null) startDelivery(); // busy busy: the same Dispatcher goes on
      const left = (outbox as NonNullable<typeof outbox>).jobs - delivered;
      spent(); // starting or stopping belongs to no window
      return { ...before, left };
    },
    async drain() {
      const { jobs } = outbox as NonNullable<typeof outbox>;
      spent();
      const drained = new Promise<void>((resolve) => {
        onDelivered = () => delivered === jobs && resolve();
      });
      startDelivery();
      await drained;
      onDelivered = () => {};
      const result = spent();
      await stopDelivery();
      return result;
    },
    async close() {
      await stopDelivery();
      const { store, file } = outbox as NonNullable<typeof outbox>;
      await store.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      outbox = null;
      return 'ok';
    },
  };

  let queue = Promise.resolve();
  createInterface({ input: process.stdin })
    .on('line', (line) => {
      const [name = '', ...args] = line.trim().split(' ');
      queue = queue
        .then(async () => {
          const command = commands[name];
          if (command === undefined) throw new Error(`unknown command: ${name}`);
          process.stdout.write(`${JSON.stringify(await command(args))}\n`);
        })
        .catch((error: unknown) => {
          console.error(error);
          process.exit(1);
        });
    })
    .on('close', () => {
      server.closeAllConnections();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
}

export interface ShopChild {
  url: string;
  /** Sends one command and resolves with the child's one-line answer, parsed. */
  ask<T>(command: string): Promise<T>;
  close(): void;
}

export function startShopChild(env: Record<string, string>): Promise<ShopChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--serve-shop'],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  );
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) =>
    waiting.shift()?.(line),
  );
  const nextLine = () => new Promise<string>((resolve) => waiting.push(resolve));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the shop child exited with code ${code}`))),
  );
  exited.catch(() => {});
  const ask = <T>(command: string) => {
    const answer = nextLine();
    child.stdin?.write(`${command}\n`);
    const line = withinLimit(Promise.race([answer, exited]), `shop child: ${command}`, COMMAND_LIMIT_MS);
    return line.then((text) => JSON.parse(text) as T);
  };
  return withinLimit(Promise.race([nextLine(), exited]), 'shop child start', COMMAND_LIMIT_MS).then(
    (port) => ({ url: `http://127.0.0.1:${port}`, ask, close: () => child.stdin?.end() }),
  );
}

if (process.argv.includes('--serve-shop')) await serveShop();
