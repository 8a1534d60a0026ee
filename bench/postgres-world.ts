/**
 * What the parts of the Postgres benchmark (`postgres.ts`, `postgres-delivery.ts`) share: the server, the
 * schemas each variant gets (dropped at the end), an outbox of ours on a fresh schema, the backends' CPU
 * read from /proc, and small helpers.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createPostgresOutbox, migrate, type PostgresOutbox } from '@postback/postgres';
import pg from 'pg';

export const URL_ = process.env.POSTBACK_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Connections per pool: the server's limit is shared. */
export const POOL_MAX = 10;
export const tag = randomBytes(4).toString('hex');
export const admin = new pg.Pool({ connectionString: URL_, max: 2 });
/** Every schema a variant made: dropped by {@link dropSchemas}. */
export const schemas: string[] = [];

export async function ourOutbox(
  name: string,
  preparedStatements = true,
): Promise<{ outbox: PostgresOutbox; pool: pg.Pool; schema: string }> {
  const schema = `pbbench_${name}_${tag}`;
  schemas.push(schema);
  const pool = new pg.Pool({ connectionString: withAppName(URL_, schema), max: POOL_MAX });
  await migrate(pool, { schema });
  return { outbox: createPostgresOutbox({ pool, schema, preparedStatements }), pool, schema };
}

/** Runs `count` tasks with at most `width` in flight. */
export async function inFlight(
  count: number,
  width: number,
  task: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

export async function inTx(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<unknown>): Promise<void> {
  const tx = await pool.connect();
  try {
    await tx.query('BEGIN');
    await work(tx);
    await tx.query('COMMIT');
  } catch (err) {
    await tx.query('ROLLBACK');
    throw err;
  } finally {
    tx.release();
  }
}

export const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US')}/s`;

/** `url` with `application_name` set, so the server's backends of one run can be found. */
export function withAppName(url: string, name: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}application_name=${name}`;
}

/** CPU time (µs) used so far by each backend of `appName`, read from /proc (empty where there is none). */
export async function backendCpu(appName: string): Promise<Map<number, number>> {
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
    appName,
  ]);
  const cpu = new Map<number, number>();
  for (const { pid } of rows as Array<{ pid: number }>) {
    try {
      // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 a second on Linux).
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * 10_000);
    } catch {
      // Not on this machine (a remote server) or already gone.
    }
  }
  return cpu;
}

/** Drops every schema made and closes the admin pool. */
export async function dropSchemas(): Promise<void> {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
