/**
 * Opens the Outbox a command works on, from its flags: `--db FILE` (SQLite, the default backend),
 * `--pg URL` (PostgreSQL) or `--sqs QUEUE_URL` (Amazon SQS). Each backend module is imported only when
 * chosen, so a command never loads a driver it does not use, and a shop that installed only the SQLite
 * backend gets a {@link MissingPackageError} naming the package to install when it asks for another.
 */
import { BackendFlagError, type BackendFlags, type OpenedBackend } from './backend.ts';
import { explainMissingPackage, type OptionalBackendFlag } from './packages.ts';

/**
 * The oldest Node.js that every postback package supports, as every package.json's `engines` states it:
 * `node:sqlite` (the default backend) works without a flag from Node 22.13.
 */
export const MIN_NODE_VERSION = '22.13.0';

/**
 * Loads a backend's module (injected in tests to simulate a Node without `node:sqlite`, or an install
 * without `@postback/postgres` / `@postback/sqs`).
 */
export interface BackendLoaders {
  sqlite(): Promise<Pick<typeof import('./sqlite.ts'), 'open'>>;
  postgres(): Promise<Pick<typeof import('./postgres.ts'), 'open'>>;
  sqs(): Promise<Pick<typeof import('./sqs.ts'), 'open'>>;
}

const realLoaders: BackendLoaders = {
  sqlite: () => import('./sqlite.ts'),
  postgres: () => import('./postgres.ts'),
  sqs: () => import('./sqs.ts'),
};

/** Thrown when the running Node.js lacks a built-in module a backend needs (`node:sqlite` before 22.13). */
export class NodeVersionError extends Error {
  override name = 'NodeVersionError';
}

/**
 * Turns "No such built-in module: node:sqlite" into an error that says which Node.js is needed and which
 * one is running; any other error is returned as it is.
 */
function explainMissingBuiltin(error: unknown, backend: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  const missing = /No such built-in module: (node:\S+)/.exec(message)?.[1];
  if (code !== 'ERR_UNKNOWN_BUILTIN_MODULE' && missing === undefined) return error;
  return new NodeVersionError(
    `the ${backend} backend needs Node.js >= ${MIN_NODE_VERSION} (${missing ?? 'a built-in module'} is missing); ` +
      `this is Node.js ${process.versions.node}. Upgrade Node.js`,
    { cause: error },
  );
}

/**
 * Opens the backend named by exactly one of `--db`, `--pg`, `--sqs`.
 *
 * @example
 * ```ts
 * const { outbox } = await openBackend({ db: 'postback.db' }); // on Node < 22.13: a NodeVersionError
 * await openBackend({ pg: 'postgres://...' }); // without @postback/postgres installed: a MissingPackageError
 * ```
 */
export async function openBackend(
  flags: BackendFlags,
  env: Record<string, string | undefined> = {},
  loaders: BackendLoaders = realLoaders,
): Promise<OpenedBackend> {
  const given = (['db', 'pg', 'sqs'] as const).filter((k) => flags[k] !== undefined);
  if (given.length !== 1) {
    throw new BackendFlagError('give exactly one of --db FILE, --pg URL or --sqs QUEUE_URL');
  }
  const load = async <M>(name: string, loader: () => Promise<M>, flag?: OptionalBackendFlag): Promise<M> => {
    try {
      return await loader();
    } catch (error) {
      throw explainMissingBuiltin(flag === undefined ? error : explainMissingPackage(error, flag), name);
    }
  };
  if (flags.db !== undefined) {
    const access = {
      ...(flags.create === undefined ? {} : { create: flags.create }),
      ...(flags.readOnly === undefined ? {} : { readOnly: flags.readOnly }),
    };
    return (await load('SQLite', loaders.sqlite)).open(flags.db, env, access);
  }
  if (flags.pg !== undefined) {
    // The backend reads its schema from POSTBACK_PG_SCHEMA; a --schema flag overrides it.
    const pgEnv = flags.schema === undefined ? env : { ...env, POSTBACK_PG_SCHEMA: flags.schema };
    return (await load('PostgreSQL', loaders.postgres, '--pg')).open(flags.pg, pgEnv);
  }
  const sqsOptions = flags.sqsWaitSeconds === undefined ? {} : { waitTimeSeconds: flags.sqsWaitSeconds };
  return (await load('SQS', loaders.sqs, '--sqs')).open(flags.sqs as string, env, sqsOptions);
}
