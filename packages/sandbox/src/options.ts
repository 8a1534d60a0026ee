/**
 * Options of `startSandbox`: one hand-written schema that is the single source of truth for their types,
 * defaults and validation. Hand-written (not zod) so the package stays light and the errors name the field.
 */

import { type FaultConfig, parseFaultConfig } from './faults.ts';
import { HttpProblem } from './problem.ts';
import { type SandboxVariant, variantListProblem } from './variants.ts';

/**
 * Port the sandbox listens on; 0 picks a free one.
 * @defaultValue 0
 * @example
 * ```ts
 * startSandbox({ port: DEFAULT_PORT }); // a free port
 * ```
 */
export const DEFAULT_PORT = 0;

/**
 * Interface the sandbox binds to. Loopback only by default: the sandbox has no real authentication.
 * @defaultValue '127.0.0.1'
 * @example
 * ```ts
 * startSandbox({ host: DEFAULT_HOST });
 * ```
 */
export const DEFAULT_HOST = '127.0.0.1';

/**
 * Name of the query parameter that carries the click token on landing URLs (not in the spec).
 * @defaultValue 'click_token'
 * @example
 * ```ts
 * new URL(click.landing_url).searchParams.get(DEFAULT_CLICK_PARAM);
 * ```
 */
export const DEFAULT_CLICK_PARAM = 'click_token';

/**
 * Days after a confirmation during which it may be reversed: the sandbox's stand-in, since the spec does
 * not give the length. `@postback/core` does not assume it (its return window is open-ended by default:
 * the service's "window closed" answer ends a reversal), so tests set other lengths to prove it.
 * @defaultValue 30
 * @example
 * ```ts
 * startSandbox({ returnWindowDays: DEFAULT_RETURN_WINDOW_DAYS / 2 });
 * ```
 */
export const DEFAULT_RETURN_WINDOW_DAYS = 30;

/**
 * How many `/v1` requests the request log keeps (`GET /_sandbox/requests`); older ones are dropped and
 * counted. The per-key counters beside it are never dropped.
 * @defaultValue 10_000
 * @example
 * ```ts
 * startSandbox({ requestLogSize: DEFAULT_REQUEST_LOG_SIZE * 10 }); // a long benchmark
 * ```
 */
export const DEFAULT_REQUEST_LOG_SIZE = 10_000;

/**
 * Options of {@link startSandbox}.
 * @example
 * ```ts
 * const options: SandboxOptions = { port: 4010, clickParam: 'clid' };
 * ```
 */
export interface SandboxOptions {
  /** @defaultValue {@link DEFAULT_PORT} */
  port?: number;
  /** @defaultValue {@link DEFAULT_HOST} */
  host?: string;
  /** @defaultValue {@link DEFAULT_CLICK_PARAM} */
  clickParam?: string;
  /** @defaultValue {@link DEFAULT_RETURN_WINDOW_DAYS} */
  returnWindowDays?: number;
  /**
   * The real clock the sandbox clock starts from (`POST /_sandbox/clock` moves it forward from there).
   * @defaultValue `Date.now`
   */
  now?: () => number;
  /**
   * Random source in [0, 1) for fault injection, so tests of fault rates can be deterministic.
   * @defaultValue `Math.random`
   */
  random?: () => number;
  /**
   * Response variants on from the start (see `SANDBOX_VARIANTS` and the README); `POST /_sandbox/variants`
   * changes them at run time and `POST /_sandbox/reset` brings these back.
   * @defaultValue `[]` (the default answers)
   */
  variants?: readonly SandboxVariant[];
  /**
   * Faults on from the start, as the body of `POST /_sandbox/faults` (e.g. `{ rate_limit_per_s: 5 }`);
   * `POST /_sandbox/faults` replaces them at run time and `POST /_sandbox/reset` brings these back.
   * @defaultValue `{}` (no faults)
   */
  faults?: Readonly<Partial<FaultConfig>>;
  /** @defaultValue {@link DEFAULT_REQUEST_LOG_SIZE} */
  requestLogSize?: number;
}

/** {@link SandboxOptions} with every default filled in. */
export type ResolvedSandboxOptions = Required<SandboxOptions>;

/**
 * An option of {@link startSandbox} is unknown or invalid. `field` names it.
 * @example
 * ```ts
 * try { resolveSandboxOptions({ prot: 1 } as never); } catch (e) { (e as SandboxOptionsError).field; } // 'prot'
 * ```
 */
export class SandboxOptionsError extends TypeError {
  override name = 'SandboxOptionsError';
  /** The offending option. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(`Invalid sandbox option '${field}': ${message}`);
    this.field = field;
  }
}

type Check = (value: unknown) => string | null;

const isPort: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65_535 ? null : 'must be an integer 0..65535';
const isHost: Check = (v) => (typeof v === 'string' && v.length > 0 ? null : 'must be a non-empty string');
const isParamName: Check = (v) =>
  typeof v === 'string' && /^[A-Za-z0-9_.~-]{1,64}$/.test(v)
    ? null
    : 'must be 1-64 URL-safe characters [A-Za-z0-9_.~-]';
const isDays: Check = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= 3650
    ? null
    : 'must be a number of days in (0, 3650]';
const isFunction: Check = (v) => (typeof v === 'function' ? null : 'must be a function');
const isVariantList: Check = variantListProblem;
const isFaults: Check = (v) => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'must be an object';
  try {
    parseFaultConfig(v as Record<string, unknown>);
    return null;
  } catch (error) {
    if (error instanceof HttpProblem) return error.detail;
    throw error;
  }
};
const isLogSize: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 1_000_000
    ? null
    : 'must be an integer 0..1000000';

/** The schema: every option with its check and default. Adding an option means adding one row here. */
const schema: { [K in keyof SandboxOptions]-?: { check: Check; default: ResolvedSandboxOptions[K] } } = {
  port: { check: isPort, default: DEFAULT_PORT },
  host: { check: isHost, default: DEFAULT_HOST },
  clickParam: { check: isParamName, default: DEFAULT_CLICK_PARAM },
  returnWindowDays: { check: isDays, default: DEFAULT_RETURN_WINDOW_DAYS },
  now: { check: isFunction, default: Date.now },
  random: { check: isFunction, default: Math.random },
  variants: { check: isVariantList, default: [] },
  faults: { check: isFaults, default: {} },
  requestLogSize: { check: isLogSize, default: DEFAULT_REQUEST_LOG_SIZE },
};

/**
 * Validates options and fills in defaults. Unknown keys are rejected, so a typo never goes unnoticed.
 *
 * @throws {@link SandboxOptionsError} naming the first bad or unknown option
 * @example
 * ```ts
 * resolveSandboxOptions({ returnWindowDays: 14 }).clickParam; // 'click_token'
 * ```
 */
export function resolveSandboxOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  if (options === null || typeof options !== 'object')
    throw new SandboxOptionsError('options', 'must be an object');
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(schema, key)) throw new SandboxOptionsError(key, 'unknown option');
  }
  const resolved: Record<string, unknown> = {};
  for (const [key, row] of Object.entries(schema)) {
    const value = (options as Record<string, unknown>)[key];
    if (value === undefined) {
      resolved[key] = row.default;
      continue;
    }
    const problem = row.check(value);
    if (problem !== null) throw new SandboxOptionsError(key, problem);
    resolved[key] = value;
  }
  return resolved as ResolvedSandboxOptions;
}
