/**
 * The shape of a command's table: its summary, usage lines, flags (type, value name, required, default,
 * environment variable, help) and the variables it reads. One table per command (`specs/<name>.ts`) is
 * the single source of its `--help` text (`help.ts`) and of how its flags are parsed and checked
 * (`flags.ts`). Types only: a table is data, so `postback --help` can list every summary without loading
 * any command.
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
  /** Environment variable read when the flag is absent (an empty value counts as unset). */
  readonly env?: string;
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
  /** Whether words that are not flags are accepted (`dlq list`). @defaultValue false */
  readonly positionals?: boolean;
  /** The exit codes, printed last (`Exit codes: ...`). */
  readonly exitCodes: string;
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
