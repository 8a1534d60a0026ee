/**
 * Connections that die under a worker (issue 13, defect 7): backends terminated with
 * `pg_terminate_backend` from a separate admin connection, again and again, including between a
 * connection's `connect()` and its LISTEN. The outbox must give every dead connection back, report every
 * pg `'error'` event instead of letting one crash the process, back off its reconnects, and keep `stats`,
 * `claim` and `close` answering. The pools here are plain `pg.Pool`s with no error listener of their own,
 * as an app hands them over.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresOutbox, type PoolLike, type PostgresOutbox } from '../src/index.ts';
import { createNotifyListener, reconnectDelay } from '../src/listener.ts';
import { freshSchema, randomSchema, TEST_PG_URL, testPool } from './pg-test-db.ts';

const admin = testPool(2);
afterAll(() => admin.end());

/** Errors that reached the process instead of the outbox (an unhandled 'error' event, a lost rejection). */
const escaped: unknown[] = [];
const onEscaped = (err: unknown) => escaped.push(err);
beforeEach(() => {
  escaped.length = 0;
  process.on('uncaughtException', onEscaped);
  process.on('unhandledRejection', onEscaped);
});
afterEach(() => {
  process.off('uncaughtException', onEscaped);
  process.off('unhandledRejection', onEscaped);
});

let schema: string;
let drop: () => Promise<void>;
beforeEach(async () => {
  ({ schema, drop } = await freshSchema(admin));
});
afterEach(() => drop());

/** A plain pool whose backends can be found by their application_name. */
function appPool(max: number): { pool: pg.Pool; appName: string } {
  const appName = randomSchema('pbt_app');
  return { pool: new pg.Pool({ connectionString: TEST_PG_URL, application_name: appName, max }), appName };
}

/** Terminates every backend of `appName`; returns how many. */
async function killAll(appName: string): Promise<number> {
  const { rows } = await admin.query(
    'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
    [appName],
  );
  return rows[0].n;
}

/** Whether a backend of `appName` is listening (its last statement was our LISTEN). */
async function listening(appName: string): Promise<boolean> {
  const { rows } = await admin.query(
    "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %' AND state = 'idle'",
    [appName],
  );
  return rows.length > 0;
}

/** Resolves with how `promise` settled, or rejects when it did not settle within `ms`. */
async function settlesWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<'ok' | 'error'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => 'ok' as const,
        () => 'error' as const,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const click = () => ({ token: 'tok_connection_loss', clickedAt: Date.now() });

describe('a LISTEN that fails after connect()', () => {
  it('gives the connection back each time, so six kills before LISTEN leave a pool of 4 answering', async () => {
    const { pool, appName } = appPool(4);
    // The real pool, except that the first six connections it hands out have had their backend
    // terminated (and the client has seen its socket close) before they are returned: deterministically
    // "between connect and LISTEN".
    let killsLeft = 6;
    const killing: PoolLike & Pick<pg.Pool, 'on' | 'off'> = {
      query: (text: string, values?: unknown[]) => pool.query(text, values),
      end: () => pool.end(),
      on: (event: 'error', listener: (err: Error) => void) => pool.on(event, listener),
      off: (event: 'error', listener: (err: Error) => void) => pool.off(event, listener),
      async connect() {
        const client = await pool.connect();
        if (killsLeft > 0) {
          killsLeft -= 1;
          const ended = new Promise((resolve) => client.once('end', resolve));
          client.on('error', () => {}); // this wrapper holds the client while it dies
          await admin.query('SELECT pg_terminate_backend($1)', [
            (client as unknown as { processID: number }).processID,
          ]);
          await ended;
        }
        return client;
      },
    } as never;
    const errors: unknown[] = [];
    const outbox = createPostgresOutbox({
      pool: killing,
      schema,
      reconnectMs: 5,
      reconnectMaxMs: 20,
      onError: (err) => errors.push(err),
    });
    try {
      await outbox.confirm({ orderId: 'ord_loss_1', valueMicros: 1, click: click() });
      const stop = outbox.subscribe(() => {});
      await waitFor(
        async () => killsLeft === 0 && (await listening(appName)),
        5000,
        'LISTEN after six kills',
      );
      expect(await settlesWithin(outbox.stats(Date.now()), 2000, 'stats')).toBe('ok');
      const claimed = outbox.claim({ now: Date.now(), limit: 5, leaseMs: 60_000 });
      expect(await settlesWithin(claimed, 2000, 'claim')).toBe('ok');
      expect((await claimed).map((j) => j.orderId)).toEqual(['ord_loss_1']);
      expect(errors.length).toBeGreaterThanOrEqual(6);
      stop();
      expect(await settlesWithin(outbox.close(), 2000, 'close')).toBe('ok');
      // Nothing is still checked out: every dead connection went back (and was destroyed).
      expect(pool.totalCount - pool.idleCount).toBe(0);
      expect(escaped).toEqual([]);
    } finally {
      await outbox.close();
      if (!pool.ending) await pool.end();
    }
  });
});

describe('backends killed again and again', () => {
  it('raise no unhandled error; stats, claim, refund and close keep answering, and LISTEN comes back', async () => {
    const { pool, appName } = appPool(4);
    const errors: unknown[] = [];
    const outbox: PostgresOutbox = createPostgresOutbox({
      pool,
      schema,
      reconnectMs: 10,
      reconnectMaxMs: 50,
      onError: (err) => errors.push(err),
    });
    let wakes = 0;
    const stop = outbox.subscribe(() => {
      wakes += 1;
    });
    try {
      await stop.ready;
      for (let i = 0; i < 12; i += 1)
        await outbox.confirm({ orderId: `ord_kill_${i}`, valueMicros: 1, click: click() });
      let killed = 0;
      for (let round = 0; round < 25; round += 1) {
        // Calls in flight while their connections die, plus idle pooled connections dying.
        const calls = [
          outbox.stats(Date.now()),
          outbox.claim({ now: Date.now(), limit: 2, leaseMs: 60_000 }),
          outbox.refund({ orderId: `ord_kill_${round % 12}` }),
          outbox.getByOrder(`ord_kill_${round % 12}`),
        ].map((call: Promise<unknown>) => settlesWithin(call, 3000, `a call of round ${round}`));
        await sleep(round % 4);
        killed += await killAll(appName);
        for (const settled of await Promise.all(calls)) expect(settled).toMatch(/ok|error/);
        await sleep(10 + (round % 3) * 10);
      }
      expect(killed).toBeGreaterThan(15);
      // Reported, not thrown: the pool's and the listener's 'error' events went to onError.
      expect(errors.length).toBeGreaterThan(0);

      // Everything answers normally again, and the listener is back.
      expect(await settlesWithin(outbox.stats(Date.now()), 2000, 'stats after the kills')).toBe('ok');
      await waitFor(() => listening(appName), 5000, 'LISTEN back');
      const before = wakes;
      await outbox.confirm({ orderId: 'ord_after_kills', valueMicros: 1, click: click() });
      await waitFor(async () => wakes > before, 5000, 'wake-up after the kills');
      stop();
      expect(await settlesWithin(outbox.close(), 2000, 'close')).toBe('ok');
      expect(escaped).toEqual([]);
    } finally {
      stop();
      await outbox.close();
      await pool.end();
    }
  });
});

describe('close', () => {
  it('answers at once while the listener still waits for a free pool connection, which it then gives back', async () => {
    const { pool } = appPool(1);
    const outbox = createPostgresOutbox({ pool, schema, onError: () => {} });
    const held = await pool.connect();
    try {
      outbox.subscribe(() => {});
      await sleep(50); // the listener is now queued for the only connection
      expect(await settlesWithin(outbox.close(), 1000, 'close')).toBe('ok');
    } finally {
      held.release();
    }
    await waitFor(
      async () => pool.totalCount === pool.idleCount && pool.waitingCount === 0,
      2000,
      'given back',
    );
    await pool.end();
  });
});

describe('reconnect backoff', () => {
  it('waits at least reconnectMs, grows with each failure in a row, and never exceeds reconnectMaxMs', () => {
    const options = { baseMs: 1000, maxMs: 30_000 };
    expect(reconnectDelay(1, { ...options, random: () => 0 })).toBe(1000);
    expect(reconnectDelay(1, { ...options, random: () => 0.999 })).toBe(1999);
    expect(reconnectDelay(4, { ...options, random: () => 0.5 })).toBe(1000 + 4000);
    expect(reconnectDelay(60, { ...options, random: () => 0.999 })).toBe(30_000);
    const spread = new Set(
      Array.from({ length: 50 }, () => reconnectDelay(5, { ...options, random: Math.random })),
    );
    expect(spread.size).toBeGreaterThan(40); // jitter: workers that lost the server together do not return together
  });

  it('spaces out attempts against a server that refuses connections, reporting each one', async () => {
    const dead = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/test', max: 2 });
    let attempts = 0;
    const counting: PoolLike = {
      query: (text, values) => dead.query(text, values),
      end: () => dead.end(),
      connect: () => {
        attempts += 1;
        return dead.connect();
      },
    };
    const errors: unknown[] = [];
    const listener = createNotifyListener({
      pool: counting,
      channel: 'postback_backoff',
      onError: (err) => errors.push(err),
      reconnectMs: 20,
      reconnectMaxMs: 400,
      random: () => 0.999,
    });
    listener.subscribe(() => {});
    await sleep(1500);
    await listener.close();
    const afterClose = attempts;
    // Delays 20 + ~20·2^(n−1), capped at 400: about 8 attempts in 1.5 s (a fixed 20 ms would make ~70).
    expect(attempts).toBeGreaterThanOrEqual(5);
    expect(attempts).toBeLessThanOrEqual(10);
    expect(errors).toHaveLength(attempts);
    await sleep(500);
    expect(attempts).toBe(afterClose); // no attempt after close
    await dead.end();
  });
});
