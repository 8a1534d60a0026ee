/**
 * The worker's tuning flags are options of the Dispatcher (core's `dispatcherOptionsSchema`) and of the
 * ad-service client (`clientOptionsSchema`), each named by its path there. Their defaults (shown by
 * `--help`), bounds and types come from those schemas, and the values go into them unchanged: there is no
 * second set of defaults or renamed copy of an option here. Loaded by the worker's table, so it imports
 * schemas only.
 */
import { clientOptionsSchema } from '@postback/client';
import { dispatcherOptionsSchema } from '@postback/core';
import type { FlagSpec } from './spec.ts';

/** The Dispatcher options a worker flag sets (a pick of core's schema: its defaults, its checks). */
export const dispatcherTuningSchema = dispatcherOptionsSchema.pick({
  concurrency: true,
  batchSize: true,
  leaseMs: true,
  pollIntervalMs: true,
  authPauseMs: true,
  backoff: true,
});

/** The client options a worker flag sets (a pick of the client's schema). */
export const clientTuningSchema = clientOptionsSchema.pick({ timeout: true });

/** The Dispatcher options the worker's flags resolve to, every default filled in by core's schema. */
export type DispatcherTuning = ReturnType<typeof dispatcherTuningSchema.parse>;
/** The client options the worker's flags resolve to. */
export type ClientTuning = ReturnType<typeof clientTuningSchema.parse>;

const SCHEMAS = { dispatcher: dispatcherTuningSchema, client: clientTuningSchema } as const;

/** One problem a schema reports (zod's issue). */
type Issue = NonNullable<ReturnType<typeof dispatcherTuningSchema.safeParse>['error']>['issues'][number];
const OWNER = { dispatcher: 'Dispatcher', client: 'client' } as const;

/** Which options object a flag sets, and the option's path in it. */
interface TuningTarget {
  readonly options: keyof typeof SCHEMAS;
  readonly path: readonly [string] | readonly [string, string];
}

/**
 * Each tuning flag of `postback worker` and the option it sets. A flag here and its option are the same
 * thing: its value is checked by the option's schema and passed on as it is.
 */
export const TUNING_FLAGS = {
  concurrency: { options: 'dispatcher', path: ['concurrency'] },
  'batch-size': { options: 'dispatcher', path: ['batchSize'] },
  'lease-ms': { options: 'dispatcher', path: ['leaseMs'] },
  'poll-ms': { options: 'dispatcher', path: ['pollIntervalMs'] },
  'auth-pause-ms': { options: 'dispatcher', path: ['authPauseMs'] },
  'backoff-base-ms': { options: 'dispatcher', path: ['backoff', 'baseMs'] },
  'backoff-max-ms': { options: 'dispatcher', path: ['backoff', 'maxMs'] },
  'backoff-min-ms': { options: 'dispatcher', path: ['backoff', 'minMs'] },
  'request-timeout-ms': { options: 'client', path: ['timeout'] },
} as const satisfies Record<string, TuningTarget>;

/** The name of a tuning flag. */
export type TuningFlag = keyof typeof TUNING_FLAGS;

/** `{ a: { b: value } }` for the path `['a', 'b']`. */
function nested(path: readonly string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path;
  return { [head as string]: rest.length === 0 ? value : nested(rest, value) };
}

/** The value at `path` of a resolved options object. */
function at(options: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((o, key) => (o as Record<string, unknown> | undefined)?.[key], options);
}

/** The first problem the option's schema finds with `value`, or undefined. */
function problem(target: TuningTarget, value: number): Issue | undefined {
  return SCHEMAS[target.options].safeParse(nested(target.path, value)).error?.issues[0];
}

/** The smallest and largest integers the option's schema accepts (found by asking it). */
function bounds(target: TuningTarget): { min: number; max: number } {
  const low = problem(target, Number.MIN_SAFE_INTEGER);
  const high = problem(target, Number.MAX_SAFE_INTEGER);
  const bound = (issue: Issue | undefined, code: string, fallback: number, step: number) => {
    if (issue?.code !== code) return fallback;
    const { inclusive } = issue as { inclusive?: boolean };
    const limit = Number(
      (issue as { minimum?: unknown; maximum?: unknown })[step > 0 ? 'minimum' : 'maximum'],
    );
    return inclusive === false ? limit + step : limit;
  };
  return {
    min: Math.max(0, bound(low, 'too_small', 0, 1)),
    max: bound(high, 'too_big', Number.MAX_SAFE_INTEGER, -1),
  };
}

/** Defaults of both options objects, filled in by their schemas. */
const DEFAULTS = { dispatcher: dispatcherTuningSchema.parse({}), client: clientTuningSchema.parse({}) };

/**
 * The table entry of a tuning flag: an integer whose default and bounds are the option's, and whose help
 * names the option it sets.
 *
 * @example
 * ```ts
 * tuningFlag('poll-ms', 'how often to look for due jobs when idle');
 * // { type: 'integer', value: 'N', default: 1000, min: 1, ..., help: '... (Dispatcher option pollIntervalMs)' }
 * ```
 */
export function tuningFlag(
  flag: TuningFlag,
  help: string,
): {
  readonly type: 'integer';
  readonly value: 'N';
  readonly help: string;
  readonly default: number;
  readonly min: number;
  readonly max: number;
} {
  const target: TuningTarget = TUNING_FLAGS[flag];
  const option = `${OWNER[target.options]} option ${target.path.join('.')}`;
  return {
    type: 'integer' as const,
    value: 'N' as const,
    help: `${help} (${option})`,
    default: at(DEFAULTS[target.options], target.path) as number,
    ...bounds(target),
  } satisfies FlagSpec;
}

/**
 * The Dispatcher and client options set by the tuning flags' values, through their schemas (the flags'
 * bounds are the schemas' own, so a parsed value always passes).
 *
 * @example
 * ```ts
 * const { dispatcher, client } = tuningOptions(values);
 * createDispatcher({ outbox, client: createClient({ baseUrl, ...client }), ...dispatcher });
 * ```
 */
export function tuningOptions(values: Readonly<Record<TuningFlag, number>>): {
  dispatcher: DispatcherTuning;
  client: ClientTuning;
} {
  const given = { dispatcher: {}, client: {} } as Record<keyof typeof SCHEMAS, Record<string, unknown>>;
  for (const [flag, target] of Object.entries(TUNING_FLAGS) as Array<[TuningFlag, TuningTarget]>) {
    const [head, leaf] = target.path;
    const options = given[target.options];
    if (leaf === undefined) options[head] = values[flag];
    else options[head] = { ...(options[head] as object | undefined), [leaf]: values[flag] };
  }
  return {
    dispatcher: dispatcherTuningSchema.parse(given.dispatcher),
    client: clientTuningSchema.parse(given.client),
  };
}
