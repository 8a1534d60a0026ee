/**
 * A one-line progress bar for long operator commands (`dlq replay --all`). Drawn only when stdout is a
 * terminal; otherwise the command prints a plain summary at the end, so logs and pipes stay clean.
 */
import type { CommandIo } from './io.ts';

/** A progress reporter: `update(done)` as work advances, `finish()` once. */
export interface Progress {
  update(done: number): void;
  finish(): void;
}

const WIDTH = 30;

/**
 * Creates a progress bar on `io.stdout` when `io.isTTY`, or a silent reporter otherwise.
 *
 * @example
 * ```ts
 * const bar = createProgress(io, 'replaying', total);
 * bar.update(50);
 * bar.finish();
 * ```
 */
export function createProgress(io: CommandIo, label: string, total: number): Progress {
  if (!io.isTTY) return { update() {}, finish() {} };
  const draw = (done: number) => {
    const ratio = total === 0 ? 1 : Math.min(1, done / total);
    const filled = Math.round(ratio * WIDTH);
    io.stdout(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${done}/${total}`);
  };
  draw(0);
  return {
    update: draw,
    finish() {
      io.stdout('\n');
    },
  };
}
