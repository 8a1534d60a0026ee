/**
 * A `CommandIo` that records what a command prints, for in-process tests of `main(args, io)`.
 */
import type { CommandIo } from '../src/io.ts';

/** A capturing io plus its recorded output and the controller of its stop signal. */
export interface CapturedIo extends CommandIo {
  out: () => string;
  err: () => string;
  controller: AbortController;
}

/** Creates a capturing io with the given environment (nothing from the real process leaks in). */
export function captureIo(options: { env?: Record<string, string>; isTTY?: boolean } = {}): CapturedIo {
  let out = '';
  let err = '';
  const controller = new AbortController();
  return {
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      err += text;
    },
    env: options.env ?? {},
    isTTY: options.isTTY ?? false,
    signal: controller.signal,
    out: () => out,
    err: () => err,
    controller,
  };
}
