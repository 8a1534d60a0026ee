/**
 * The optional backends' npm packages. `@postback/postgres` and `@postback/sqs` are optional peer
 * dependencies of `@postback/cli`, so a SQLite-only install carries neither `pg` nor the AWS SDK. A
 * command that needs one loads it with a dynamic import; when the package is not installed, the import
 * error becomes a {@link MissingPackageError} that names the package and the command that installs it
 * (exit 2: a configuration error, nothing was done).
 */

/** A backend flag that needs a package of its own. */
export type OptionalBackendFlag = '--pg' | '--sqs';

/** Per flag: its postback package, the command that installs it, and the packages it imports. */
export const BACKEND_PACKAGES: Readonly<
  Record<OptionalBackendFlag, { package: string; install: string; needs: readonly string[] }>
> = Object.freeze({
  '--pg': {
    package: '@postback/postgres',
    install: 'npm install @postback/postgres pg',
    needs: ['@postback/postgres', 'pg'],
  },
  '--sqs': {
    package: '@postback/sqs',
    install: 'npm install @postback/sqs',
    needs: ['@postback/sqs', '@aws-sdk/client-sqs'],
  },
});

/**
 * A backend flag was given but its package is not installed. Exit 2, with a message like
 * `--pg needs @postback/postgres: npm install @postback/postgres pg`.
 */
export class MissingPackageError extends Error {
  override name = 'MissingPackageError';
  /** The backend flag that needs the package (`--pg`, `--sqs`). */
  readonly flag: OptionalBackendFlag;
  /** The package that could not be found (`@postback/postgres`, `pg`, ...). */
  readonly packageName: string;

  constructor(flag: OptionalBackendFlag, packageName: string, options?: ErrorOptions) {
    const backend = BACKEND_PACKAGES[flag];
    const install = packageName === backend.package ? backend.install : `npm install ${packageName}`;
    const via = packageName === backend.package ? '' : ` (needed by ${backend.package})`;
    super(`${flag} needs ${packageName}${via}: ${install}`, options);
    this.flag = flag;
    this.packageName = packageName;
  }
}

/** The package name of a bare specifier: `@scope/name/sub` → `@scope/name`, `pg/lib/x` → `pg`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/**
 * The {@link MissingPackageError} for an import that failed because one of the packages `flag` needs is
 * not installed; any other error (a broken install of some other package, a syntax error) is returned
 * as it is.
 *
 * @example
 * ```ts
 * try { await import('@postback/postgres'); } catch (error) { throw explainMissingPackage(error, '--pg'); }
 * ```
 */
export function explainMissingPackage(error: unknown, flag: OptionalBackendFlag): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return error;
  const message = error instanceof Error ? error.message : '';
  const specifier = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1];
  if (specifier === undefined) return error;
  const name = packageOf(specifier);
  if (!BACKEND_PACKAGES[flag].needs.includes(name)) return error;
  return new MissingPackageError(flag, name, { cause: error });
}

/**
 * Imports a module that needs `flag`'s package, turning "not installed" into a
 * {@link MissingPackageError}.
 *
 * @example
 * ```ts
 * const { migrate } = await loadOptional('--pg', () => import('@postback/postgres'));
 * ```
 */
export async function loadOptional<M>(flag: OptionalBackendFlag, load: () => Promise<M>): Promise<M> {
  try {
    return await load();
  } catch (error) {
    throw explainMissingPackage(error, flag);
  }
}
