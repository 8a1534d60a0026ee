/**
 * What a command may touch of the outside world, injected so tests can capture output and send signals
 * without spawning a process.
 */

/** Output streams, environment and stop signal of one command run. */
export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** Whether stdout is a terminal (progress bars only then). */
  isTTY: boolean;
  /** Aborted on SIGINT/SIGTERM: long-running commands (worker, sandbox) stop gracefully. */
  signal: AbortSignal;
}

/**
 * The real process's streams, environment and signals; `stop()` aborts the stop signal as SIGTERM would
 * (the binary's last-resort guard uses it to stop a command after an unexpected error).
 */
export function defaultIo(): CommandIo & { stop(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    stop,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    isTTY: Boolean(process.stdout.isTTY),
    signal: controller.signal,
  };
}
