/**
 * Prepared statements for the worker's side of the outbox. Postgres parses and plans a statement at every
 * call unless it was prepared on that connection; the claim is a long statement whose planning cost about
 * as much as running it. Single statements go through `pg`'s named statements (prepared by `pg` on each
 * connection at first use); the claim, and the group commit's two statements in one round trip, are
 * prepared with SQL `PREPARE` once per connection and sent as `EXECUTE`s with checked literals, with
 * the generic plan forced for that transaction.
 */
import { createHash } from 'node:crypto';
import { literal } from './literal.ts';
import { connectListening, type PoolLike, type QueryResultLike, run } from './queryable.ts';

/** Names by prefix, then by text (the statement texts are built once per schema: their hash is cached). */
const names = { pbq: new Map<string, string>(), pbs: new Map<string, string>() };

/**
 * The prepared statement name of `text`: `prefix` (`pbq` for `pg`'s named statements, `pbs` for SQL
 * `PREPARE`, so the two never collide on a connection) and a hash of the text, which holds the schema.
 *
 * @example
 * ```ts
 * statementName('pbq', sql.claim); // 'pbq_3f2a…'
 * ```
 */
export function statementName(prefix: 'pbq' | 'pbs', text: string): string {
  const known = names[prefix];
  let name = known.get(text);
  if (name === undefined) {
    name = `${prefix}_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    known.set(text, name);
  }
  return name;
}

/** One statement of a script, with the checked values inlined as its `$1`, `$2`, ... */
export interface ScriptStep {
  text: string;
  values: readonly unknown[];
}

/**
 * The `PREPARE`d names of each connection. A `pg` pool hands out the same client object for as long as
 * its connection lives, so the set goes with the connection (and with the client when it is dropped).
 */
const preparedOn = new WeakMap<object, Set<string>>();

/** For the transaction of one script only (the implicit transaction of a multi-statement message). */
const GENERIC_PLANS = 'SET LOCAL plan_cache_mode = force_generic_plan';

/** SQLSTATE of "prepared statement does not exist" (someone ran `DISCARD ALL` or `DEALLOCATE`). */
const UNDEFINED_PSTATEMENT = '26000';

/**
 * Runs `steps` as one simple-protocol message on one pooled connection: one round trip, one implicit
 * transaction, each statement with its own snapshot. Each step is `PREPARE`d on that connection the first
 * time (in a round trip of its own, once per connection), then sent as `EXECUTE name(literals)` after a
 * `SET LOCAL plan_cache_mode = force_generic_plan` (for this transaction only): Postgres's own choice
 * re-planned the claim at every call, its cost estimate for the generic plan being the higher, and that
 * planning cost as much as running it. The query-plan test checks the generic plan. Returns one result
 * per step.
 *
 * @example
 * ```ts
 * const [updated] = await runPreparedScript(pool, schema, [{ text: sql.completeMany, values }, ...]);
 * ```
 */
export async function runPreparedScript(
  pool: PoolLike,
  schema: string,
  steps: readonly ScriptStep[],
): Promise<QueryResultLike[]> {
  let broken: Error | undefined;
  const onClientError = (err: Error) => {
    broken ??= err;
  };
  const client = await connectListening(pool, onClientError);
  try {
    for (let attempt = 1; ; attempt += 1) {
      let ready = preparedOn.get(client);
      if (ready === undefined) {
        ready = new Set();
        preparedOn.set(client, ready);
      }
      for (const { text } of steps) {
        const name = statementName('pbs', text);
        if (ready.has(name)) continue;
        await run(client, schema, `PREPARE ${name} AS ${text}`);
        ready.add(name);
      }
      const script = [
        GENERIC_PLANS,
        ...steps.map(
          ({ text, values }) => `EXECUTE ${statementName('pbs', text)}(${values.map(literal).join(', ')})`,
        ),
      ].join(';\n');
      try {
        const results = (await run(client, schema, script)) as unknown as QueryResultLike[];
        return results.slice(1);
      } catch (err) {
        // The script ran as one transaction, so nothing of it was applied: prepare again and resend, once.
        if ((err as { code?: unknown }).code !== UNDEFINED_PSTATEMENT || attempt >= 2) throw err;
        preparedOn.delete(client);
      }
    }
  } catch (err) {
    broken ??= isConnectionError(err) ? (err as Error) : undefined;
    throw err;
  } finally {
    client.release(broken);
    client.off?.('error', onClientError);
  }
}

/** Whether `err` came without a SQLSTATE (the connection, not a statement, failed): that client is dropped. */
function isConnectionError(err: unknown): boolean {
  const failure = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = failure?.code ?? failure?.cause?.code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code);
}
