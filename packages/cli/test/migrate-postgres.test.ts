/**
 * `postback migrate` and the `--pg` backend against the real Postgres server, run in-process through
 * `main(args, io)`: exit codes, what is printed (never the password), and a worker-ready outbox after.
 */
import { randomBytes } from 'node:crypto';
import { createPostgresOutbox, LATEST_SCHEMA_VERSION } from '@postback/postgres';
import { startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { openBackend } from '../src/backends/index.ts';
import { describePgUrl } from '../src/backends/postgres.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';

const URL_ = process.env.POSTBACK_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const { pool: admin } = createPostgresOutbox({ connectionString: URL_, poolSize: 2 });
const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
  await admin.end();
});
const newSchema = () => {
  const s = `pbcli_${randomBytes(5).toString('hex')}`;
  schemas.push(s);
  return s;
};

describe('postback migrate', () => {
  it('creates the tables, then reports the schema up to date on a second run (exit 0 both times)', async () => {
    const schema = newSchema();
    const first = captureIo();
    expect(await main(['migrate', '--pg', URL_, '--schema', schema], first)).toBe(0);
    expect(first.out()).toMatch(
      new RegExp(
        `migrated schema ${schema} on postgres://postgres@127.0.0.1:5432/test from version 0 to ${LATEST_SCHEMA_VERSION}`,
      ),
    );
    const second = captureIo();
    expect(await main(['migrate', '--pg', URL_, '--schema', schema], second)).toBe(0);
    expect(second.out()).toContain(`up to date (version ${LATEST_SCHEMA_VERSION})`);
    const { rows } = await admin.query(
      'SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename',
      [schema],
    );
    // Jobs, clicks, the migrations ledger, (since migration 3) worker heart-beats and (since migration 7)
    // shadow mode's settings and spend readings, (since migration 8) the ledger of every hand on the money,
    // (since migration 9) the switches of held campaigns awaiting a decision.
    expect(rows.map((r) => r.tablename)).toEqual([
      'clicks',
      'held_switches',
      'jobs',
      'ledger',
      'migrations',
      'shadow_settings',
      'shadow_spend',
      'workers',
    ]);
  });

  it('takes the schema from POSTBACK_PG_SCHEMA when --schema is not given', async () => {
    const schema = newSchema();
    const io = captureIo({ env: { POSTBACK_PG_SCHEMA: schema } });
    expect(await main(['migrate', '--pg', URL_], io)).toBe(0);
    expect(io.out()).toContain(`schema ${schema}`);
  });

  it('exits 2 without connecting for a missing --pg, an unknown flag or an unsafe schema name', async () => {
    for (const args of [
      ['migrate'],
      ['migrate', '--pg', URL_, '--bogus'],
      ['migrate', '--pg', URL_, '--schema', 'Bad-Name"'],
    ]) {
      const io = captureIo();
      expect(await main(args, io), args.join(' ')).toBe(2);
      expect(io.err()).toMatch(/postback migrate: /);
    }
  });

  it('exits 3 when the server cannot be reached, and never prints the password', async () => {
    const io = captureIo();
    expect(await main(['migrate', '--pg', 'postgres://postgres:hunter2secret@127.0.0.1:1/test'], io)).toBe(3);
    expect(io.err()).toContain('cannot connect to postgres://postgres@127.0.0.1:1/test');
    expect(io.err() + io.out()).not.toContain('hunter2secret');
  });

  it('exits 3 when the database does not exist', async () => {
    const io = captureIo();
    expect(await main(['migrate', '--pg', 'postgres://postgres@127.0.0.1:5432/no_such_db_pb'], io)).toBe(3);
  });

  it('prints the SQL with --print, without a database', async () => {
    const io = captureIo();
    expect(await main(['migrate', '--print', '--schema', 'shop_postback'], io)).toBe(0);
    expect(io.out()).toContain('CREATE TABLE "shop_postback".jobs');
    expect(io.out()).toContain('pg_advisory_xact_lock');
  });
});

describe('the --pg backend', () => {
  it('opens a migrated schema with a description free of the password, and a wake-up hook', async () => {
    const schema = newSchema();
    expect(await main(['migrate', '--pg', URL_, '--schema', schema], captureIo())).toBe(0);
    const url = URL_.replace('postgres@', 'postgres:notreallyneeded@');
    const backend = await openBackend({ pg: url }, { POSTBACK_PG_SCHEMA: schema });
    try {
      expect(backend.describe).toBe(`postgres postgres://postgres@127.0.0.1:5432/test (schema ${schema})`);
      expect(backend.describe).not.toContain('notreallyneeded');
      let woken = 0;
      const stop = backend.wake?.(() => {
        woken += 1;
      });
      await (stop as unknown as { ready: Promise<void> }).ready;
      await backend.outbox.confirm({
        orderId: 'ord_cli',
        valueMicros: 1,
        click: { token: 'tok_cli_backend', clickedAt: Date.now() },
      });
      const until = Date.now() + 5000;
      while (woken === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(woken).toBeGreaterThan(0);
      stop?.();
    } finally {
      await backend.outbox.close();
    }
  });

  it('refuses a schema that was never migrated, saying how to migrate it', async () => {
    const schema = newSchema();
    await expect(openBackend({ pg: URL_ }, { POSTBACK_PG_SCHEMA: schema })).rejects.toThrow(
      `run \`postback migrate --pg <url> --schema ${schema}\``,
    );
  });

  it('describes URLs without password or query string', () => {
    expect(describePgUrl('postgres://app:s3cret@db.internal:5433/shop?sslmode=require&password=x')).toBe(
      'postgres://app@db.internal:5433/shop',
    );
    expect(describePgUrl('host=db password=s3cret')).toBe('postgres (connection string hidden)');
  });
});

describe('postback worker --pg', () => {
  it('delivers the jobs of a migrated schema to the service and exits 0 with --drain', async () => {
    const schema = newSchema();
    expect(await main(['migrate', '--pg', URL_, '--schema', schema], captureIo())).toBe(0);
    const world = await startSandboxWorld();
    const backend = await openBackend({ pg: URL_ }, { POSTBACK_PG_SCHEMA: schema });
    try {
      const clicks = await world.clicks(3);
      for (const [i, click] of clicks.entries()) {
        await backend.outbox.confirm({ orderId: `cli-pg-${i}`, valueMicros: 1_000, click });
      }
      const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey, POSTBACK_PG_SCHEMA: schema } });
      expect(
        await main(['worker', '--pg', URL_, '--base-url', world.url, '--drain', '--log', 'json'], io),
        io.err(),
      ).toBe(0);
      expect(io.err()).toContain(`postgres postgres://postgres@127.0.0.1:5432/test (schema ${schema})`);
      const { counts } = await backend.outbox.stats(Date.now());
      expect(counts.delivered).toBe(3);
      expect((await world.conversions()).conversions.map((c) => c.order_id).sort()).toEqual([
        'cli-pg-0',
        'cli-pg-1',
        'cli-pg-2',
      ]);
    } finally {
      await backend.outbox.close();
      await world.close();
    }
  });
});
