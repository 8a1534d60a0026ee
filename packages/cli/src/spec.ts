/**
 * The shape of a command's table: its summary, usage lines, flags (type, value name, required, default,
 * environment variable, help) and the variables it reads. One table per command (`specs/<name>.ts`) is
 * the single source of its `--help` text (`help.ts`) and of how its flags are parsed and checked
 * (`flags.ts`). Types and two pure helpers only: a table is data, so `postback --help` can list every
 * summary without loading any command.
 */

/**
 * How a flag's value is read: a string as given, a switch, an integer checked against its bounds, or a
 * duration (`90m`, `24h`, `2d`, `1h30m`: see `durationValue` in `flags.ts`) read as milliseconds.
 */
export type FlagType = 'string' | 'boolean' | 'integer' | 'duration';

/** One flag of a command, `--<key>` in the table's `flags` record. */
export interface FlagSpec {
  readonly type: FlagType;
  /** What the flag does, for `--help`; `\n` starts an indented continuation line. */
  readonly help: string;
  /** Name of the value in `--help` (`FILE`, `URL`, `N`); none for a boolean. */
  readonly value?: string;
  /** Missing (from the flag and its `env` variable) is a usage error: `--x is required`. */
  readonly required?: boolean;
  /**
   * Taken when neither the flag nor its `env` variable gives a value; shown in `--help`. A `duration`
   * flag's default is written as one (`24h`).
   */
  readonly default?: string | number;
  /**
   * Environment variable read when the flag is absent (an empty value counts as unset). Without one, a
   * flag of a command with `flagEnv` reads {@link flagEnvName}`(name)`; `false` opts a flag out of that rule.
   */
  readonly env?: string | false;
  /**
   * Flags sharing a group name are alternatives (`--db`, `--pg`, `--sqs`): when one of them is on the
   * command line, the environment variables of the others are not read (the flag wins over the
   * environment as a whole, not only over its own variable).
   */
  readonly oneOf?: string;
  /** A `duration` flag that also takes `0` or `off`, read as 0 (the feature is off). */
  readonly off?: boolean;
  /** The flag may be given several times; its value is the list. */
  readonly multiple?: boolean;
  /** One-letter alias (`-x`). */
  readonly short?: string;
  /** The only values accepted (strings). */
  readonly choices?: readonly string[];
  /** Smallest integer accepted. @defaultValue 1 */
  readonly min?: number;
  /** Largest integer accepted. @defaultValue Number.MAX_SAFE_INTEGER */
  readonly max?: number;
}

/** A command's flags by name, without the leading `--`. */
export type FlagTable = Readonly<Record<string, FlagSpec>>;

/** An environment variable a command reads that is not the fallback of a flag (those are in `FlagSpec.env`). */
export interface EnvSpec {
  readonly name: string;
  /** What it holds, for `--help`; a missing required one is reported as `set NAME to <help>`. */
  readonly help: string;
  readonly required?: boolean;
  /**
   * The flag it goes with (`POSTBACK_SQS_DLQ_URL` with `sqs`): `--help` shows it as `--sqs: <help>`, and
   * only for a command that has that flag, so a shared list of variables never names a flag the command
   * refuses.
   */
  readonly flag?: string;
}

/** The table of one command. */
export interface CommandSpec<F extends FlagTable = FlagTable> {
  /** The word after `postback`. */
  readonly name: string;
  /** One line, listed by `postback --help`. */
  readonly summary: string;
  /** Usage lines without the `Usage:` prefix (`postback status (--db FILE | ...) [--json]`). */
  readonly usage: readonly string[];
  /** What the command does, printed after the usage (several lines allowed). */
  readonly description: string;
  readonly flags: F;
  /** Variables read besides the flags' own `env` fallbacks. */
  readonly env?: readonly EnvSpec[];
  /**
   * Every flag of this command is also read from the environment: `--batch-size` from
   * `POSTBACK_BATCH_SIZE` (see {@link flagEnvName}), unless the flag names its own `env` (or `false`).
   * The flag wins over the variable. @defaultValue false
   */
  readonly flagEnv?: boolean;
  /** Whether words that are not flags are accepted (`dlq list`). @defaultValue false */
  readonly positionals?: boolean;
  /** The exit codes, printed last (`Exit codes: ...`). */
  readonly exitCodes: string;
}

/**
 * The environment variable of a flag under the `flagEnv` rule: `POSTBACK_` and the flag's name in upper
 * case, dashes as underscores.
 *
 * @example
 * ```ts
 * flagEnvName('batch-size'); // 'POSTBACK_BATCH_SIZE'
 * ```
 */
export function flagEnvName(name: string): string {
  return `POSTBACK_${name.toUpperCase().replace(/-/g, '_')}`;
}

/**
 * The environment variable a flag is read from, if any: its own `env`, else the `flagEnv` rule.
 *
 * @example
 * ```ts
 * envOf(workerSpec, 'concurrency'); // 'POSTBACK_CONCURRENCY'
 * ```
 */
export function envOf(spec: Pick<CommandSpec, 'flags' | 'flagEnv'>, name: string): string | undefined {
  const own = spec.flags[name]?.env;
  if (own === false) return undefined;
  if (own !== undefined) return own;
  return spec.flagEnv ? flagEnvName(name) : undefined;
}

type OneValue<F> = F extends { type: 'boolean' }
  ? boolean
  : F extends { type: 'integer' } | { type: 'duration' }
    ? number
    : F extends { multiple: true }
      ? string[]
      : F extends { choices: readonly (infer C extends string)[] }
        ? C
        : string;

type FlagValue<F> = F extends { type: 'boolean' }
  ? boolean
  : F extends { required: true } | { default: string | number }
    ? OneValue<F>
    : OneValue<F> | undefined;

/** The parsed values of a flag table: booleans are `false` when absent, optional flags `undefined`. */
export type FlagValues<F extends FlagTable> = { -readonly [K in keyof F]: FlagValue<F[K]> };
