/**
 * The `postback` binary's last line of defence, for what no command caught: an exception nobody handled
 * (an `'error'` event of a driver with no listener), a rejected promise nobody awaited, or a command whose
 * work can never finish (the event loop is empty while it still waits: a connection pool that lost every
 * connection). Each ends in a documented exit code with one clean line on stderr — never Node's exit 13
 * ("unsettled top-level await"), never a stack trace, never the API key.
 */
import { createRedactor } from '@postback/client';
import { EXIT } from './args.ts';
import { printable } from './format.ts';
import { ACCOUNT_KEY_ENV_PREFIX } from './keys.ts';

/** What the guard needs of the process; the binary passes the real one. */
export interface LastResortOptions {
  /** Writes to stderr. */
  stderr(text: string): void;
  /** Asks the running command to stop gracefully (the worker then gives its claimed jobs back). */
  stop(): void;
  /** Values that must never be printed, in any form (the API keys: see {@link envSecrets}). */
  secrets: readonly string[];
  /** Ends the process (`process.exit`). */
  exit(code: number): void;
  /**
   * How long a command asked to stop after an unexpected error may take before the process is ended.
   * @defaultValue 120_000
   */
  crashStopMs?: number;
  /**
   * How long after the command finished the process may linger on open handles (a socket a driver did not
   * close) before it is ended with the command's code.
   * @defaultValue 2_000
   */
  lingerMs?: number;
}

/** The guard of one run; `finish` is called with the command's exit code and returns the process's. */
export interface LastResort {
  finish(code: number): number;
}

/**
 * The keys the environment holds: `POSTBACK_API_KEY` and every `POSTBACK_API_KEY__<ACCOUNT>`.
 *
 * @example
 * ```ts
 * installLastResort({ ..., secrets: envSecrets(process.env) });
 * ```
 */
export function envSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .filter(([name]) => name === 'POSTBACK_API_KEY' || name.startsWith(ACCOUNT_KEY_ENV_PREFIX))
    .map(([, value]) => value ?? '')
    .filter((value) => value !== '');
}

/**
 * Name and message of what was thrown, on one line, never with a stack, and without `redact`'s secrets
 * (in any form a service may echo them: see `createRedactor` of `@postback/client`).
 */
export function describeThrown(thrown: unknown, redact: (text: string) => string): string {
  const text =
    thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : `non-error value: ${String(thrown)}`;
  return printable(redact(text));
}

/**
 * Installs the guard on `process` for the rest of the run.
 *
 * - An uncaught exception or unhandled rejection: one line `postback: unexpected error, stopping: ...`, the
 *   command is asked to stop gracefully, and the process ends with {@link EXIT}.failed (1) — or the
 *   command's own non-zero code — once it has; after `crashStopMs` at the latest.
 * - The event loop empties while the command still waits (nothing left that could ever settle it): one
 *   line saying so, exit 1 (instead of Node's 13).
 * - The command finished but a driver left a handle open: the process ends with the command's code after
 *   `lingerMs` instead of hanging.
 *
 * @example
 * ```ts
 * const guard = installLastResort({ stderr, stop: () => io.stop(), secrets: envSecrets(process.env), exit: process.exit });
 * process.exitCode = guard.finish(await main(argv, io));
 * ```
 */
export function installLastResort(options: LastResortOptions): LastResort {
  const { stderr, stop, exit } = options;
  const redact = createRedactor(options.secrets);
  let finished = false;
  let crashed = false;
  const later = (ms: number, code: () => number) => setTimeout(() => exit(code()), ms).unref();

  const onUnexpected = (thrown: unknown) => {
    if (finished) return;
    stderr(`postback: unexpected error, stopping: ${describeThrown(thrown, redact)}\n`);
    if (crashed) return;
    crashed = true;
    stop();
    later(options.crashStopMs ?? 120_000, () => EXIT.failed);
  };
  process.on('uncaughtException', onUnexpected);
  process.on('unhandledRejection', onUnexpected);
  process.on('beforeExit', () => {
    if (finished) return;
    finished = true;
    stderr(
      'postback: stopped: the command was waiting for something that can no longer happen ' +
        '(lost connections?); jobs it still held go back to pending when their lease runs out\n',
    );
    exit(EXIT.failed);
  });

  return {
    finish(code) {
      finished = true;
      const final = crashed && code === EXIT.ok ? EXIT.failed : code;
      later(options.lingerMs ?? 2_000, () => final);
      return final;
    },
  };
}
