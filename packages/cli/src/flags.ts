/**
 * Parses and checks a command's arguments against its table (`spec.ts`): `node:util` `parseArgs` in
 * strict mode, then each flag in table order — its `env` fallback, choices, integer bounds, default —
 * then the required flags and variables. Every failure is a {@link UsageError} (exit 2) worded the same
 * way in every command. `-h, --help` is accepted by every command and stops the checks.
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { validateAccount } from '@postback/core/store';
import { UsageError, validationProblem } from './args.ts';
import { text } from './format.ts';
import { type CommandSpec, envOf, type FlagSpec, type FlagTable, type FlagValues } from './spec.ts';

/** What {@link parseCommand} returns: the checked values, the words that are not flags, and `--help`. */
export interface ParsedCommand<F extends FlagTable> {
  values: FlagValues<F>;
  positionals: string[];
  /** `--help` was given: nothing else was checked. */
  help: boolean;
}

/**
 * Reads an integer flag value: digits only, a safe integer, inside the flag's bounds.
 *
 * @example
 * ```ts
 * integerValue('--concurrency', '8', {}); // 8
 * integerValue('--port', '70000', { min: 0, max: 65_535 }); // throws: --port must be an integer 0..65535, got '70000'
 * ```
 */
export function integerValue(flag: string, value: string, bounds: { min?: number; max?: number }): number {
  const min = bounds.min ?? 1;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
    const what =
      max !== Number.MAX_SAFE_INTEGER
        ? `an integer ${min}..${max}`
        : min === 1
          ? 'a positive integer'
          : min === 0
            ? 'a non-negative integer'
            : `an integer of at least ${min}`;
    throw new UsageError(`${flag} must be ${what}, got '${value}'`);
  }
  return n;
}

/**
 * Reads the account filter of a listing command (`jobs`, `dlq`): `--account ID` (checked by core's rules
 * for an account), `--no-account` (only jobs without an account: `null`), or neither (every account:
 * `undefined`). An empty `--account ''` is refused, pointing at `--no-account`.
 *
 * @example
 * ```ts
 * accountFilter({ account: 'shop-17' }); // 'shop-17'
 * accountFilter({ 'no-account': true }); // null
 * accountFilter({}); // undefined
 * ```
 */
export function accountFilter(values: {
  account?: string | undefined;
  'no-account'?: boolean | undefined;
}): string | null | undefined {
  const account = values.account;
  if (values['no-account']) {
    if (account !== undefined) throw new UsageError('give either --account ID or --no-account, not both');
    return null;
  }
  if (account === undefined) return undefined;
  if (account === '') {
    throw new UsageError(
      '--account must not be empty (give --no-account for the jobs without an account, or leave both out for every account)',
    );
  }
  try {
    return validateAccount(account, '--account');
  } catch (error) {
    const problem = validationProblem(error);
    if (problem === null) throw error;
    throw new UsageError(`--account ${problem.reason}`);
  }
}

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Reads a duration flag value as milliseconds: one or more `<digits><unit>` parts, units `ms`, `s`, `m`,
 * `h`, `d`, `w` (`90m`, `24h`, `2d`, `1h30m`). A bare number is refused: minutes or hours would be a guess.
 *
 * @example
 * ```ts
 * durationValue('--deadline-within', '1h30m'); // 5_400_000
 * durationValue('--older-than', '7'); // throws: --older-than must be a duration like 90m, 24h or 2d, got '7'
 * ```
 */
export function durationValue(flag: string, value: string): number {
  if (/^(\d+(ms|s|m|h|d|w))+$/.test(value)) {
    let ms = 0;
    for (const [, digits, unit] of value.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) {
      ms += Number(digits) * (DURATION_UNITS_MS[unit as string] ?? Number.NaN);
    }
    if (Number.isSafeInteger(ms)) return ms;
  }
  throw new UsageError(`${flag} must be a duration like 90m, 24h or 2d, got '${value}'`);
}

function options(flags: FlagTable): ParseArgsOptionsConfig {
  const config: ParseArgsOptionsConfig = { help: { type: 'boolean', short: 'h' } };
  for (const [name, flag] of Object.entries(flags)) {
    config[name] = {
      type: flag.type === 'boolean' ? 'boolean' : 'string',
      ...(flag.multiple ? { multiple: true } : {}),
      ...(flag.short === undefined ? {} : { short: flag.short }),
    };
  }
  return config;
}

function orList(words: readonly string[]): string {
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

const TRUE_WORDS = ['1', 'true', 'yes', 'on'];
const FALSE_WORDS = ['0', 'false', 'no', 'off'];

/** A switch read from its variable: `1`, `true`, `yes`, `on` or their opposites (any case). */
function switchValue(variable: string, value: string): boolean {
  const word = value.trim().toLowerCase();
  if (TRUE_WORDS.includes(word)) return true;
  if (FALSE_WORDS.includes(word)) return false;
  throw new UsageError(`${variable} must be true or false (1/0, yes/no, on/off), got '${value}'`);
}

/** Where a flag's value comes from, for the checks and their messages. */
interface Source {
  /** The value on the command line, if any. */
  given: unknown;
  /** The flag's environment variable (when it may be read). */
  variable: string | undefined;
  env: Record<string, string | undefined>;
}

/** The value of one flag after its env fallback, choices, bounds and default. */
function checked(name: string, flag: FlagSpec, { given, variable, env }: Source): unknown {
  const fromEnv = variable === undefined ? undefined : env[variable];
  const envSet = fromEnv !== undefined && fromEnv !== '';
  if (flag.type === 'boolean') {
    if (given === true) return true;
    return envSet ? switchValue(variable as string, fromEnv) : false;
  }
  let value = given as string | string[] | undefined;
  // A value from the environment is named by its variable in messages: that is what the user set.
  let label = `--${name}`;
  if (value === undefined && envSet) {
    value = flag.multiple ? fromEnv.split(',').map((v) => v.trim()) : fromEnv;
    label = `${variable} (--${name})`;
  }
  if (value === undefined) {
    if (flag.required) {
      throw new UsageError(
        variable === undefined
          ? `--${name} is required`
          : `give --${name}${flag.value === undefined ? '' : ` ${flag.value}`} or set ${variable}`,
      );
    }
    return flag.type === 'duration' && typeof flag.default === 'string'
      ? durationFlag(flag, `--${name}`, flag.default)
      : flag.default;
  }
  if (typeof value !== 'string') return value;
  if (flag.choices !== undefined && !flag.choices.includes(value)) {
    throw new UsageError(`${label} must be ${orList(flag.choices)}, got '${value}'`);
  }
  if (flag.type === 'duration') return durationFlag(flag, label, value);
  return flag.type === 'integer' ? integerValue(label, value, flag) : value;
}

/** A duration, or 0 for `0`/`off` when the flag allows turning its feature off. */
function durationFlag(flag: FlagSpec, label: string, value: string): number {
  if (flag.off && (value === '0' || value.toLowerCase() === 'off')) return 0;
  try {
    return durationValue(label, value);
  } catch (error) {
    if (!flag.off) throw error;
    throw new UsageError(`${label} must be a duration like 90m, 24h or 2d, or 0/off, got '${value}'`);
  }
}

/**
 * Parses `args` against the command's table. Unknown flags, missing values, stray words (unless the
 * table takes positionals), values outside their choices or bounds, and missing required flags or
 * variables are {@link UsageError}s.
 *
 * @example
 * ```ts
 * const { values, help } = parseCommand(statusSpec, ['--db', 'a.db', '--json'], process.env);
 * values.dead; // 5, the table's default
 * ```
 */
export function parseCommand<F extends FlagTable>(
  spec: CommandSpec<F>,
  args: string[],
  env: Record<string, string | undefined>,
): ParsedCommand<F> {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args,
      options: options(spec.flags),
      strict: true,
      allowPositionals: spec.positionals ?? false,
    });
  } catch (error) {
    // parseArgs' own messages name the flag ("Unknown option '--x'"); keep them, drop the stack.
    throw new UsageError(
      error instanceof Error ? (error.message.split('. To specify')[0] ?? error.message) : String(error),
    );
  }
  if (parsed.values.help === true) {
    return { values: {} as FlagValues<F>, positionals: parsed.positionals, help: true };
  }
  const values: Record<string, unknown> = {};
  // Groups of alternatives with a member on the command line: their variables stay unread.
  const groupsGiven = new Set(
    Object.entries(spec.flags)
      .filter(([name, flag]) => flag.oneOf !== undefined && parsed.values[name] !== undefined)
      .map(([, flag]) => flag.oneOf),
  );
  for (const [name, flag] of Object.entries(spec.flags)) {
    const given = parsed.values[name];
    const variable =
      given === undefined && flag.oneOf !== undefined && groupsGiven.has(flag.oneOf)
        ? undefined
        : envOf(spec, name);
    values[name] = checked(name, flag, { given, variable, env });
  }
  for (const variable of spec.env ?? []) {
    const value = env[variable.name];
    if (variable.required && (value === undefined || value.trim() === ''))
      throw new UsageError(`set ${variable.name} to ${variable.help}`);
  }
  return { values: values as FlagValues<F>, positionals: parsed.positionals, help: false };
}

/**
 * An ISO 8601 time with a date (a bare date is its UTC midnight), or a usage error naming the flag.
 *
 * @example
 * ```ts
 * timeValue('created-before', '2026-11-03T00:00:00Z'); // 1793664000000
 * ```
 */
export function timeValue(flag: string, value: string): number {
  const at = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(at))
    throw new UsageError(text`--${flag} must be an ISO 8601 time (2026-11-03T00:00:00Z), got ${value}`);
  return at;
}
