/**
 * The I/O of a CLI command run in process, as a shell would run it (no environment but what is given, no
 * terminal): what it prints is kept for the test to read.
 */
import type { CommandIo } from '../../packages/cli/src/io.ts';

/**
 * A `CommandIo` keeping stdout and stderr.
 *
 * @example
 * ```ts
 * const captured = capturedIo({ POSTBACK_API_KEY: key });
 * const code = await main(['status', '--db', file], captured.io);
 * JSON.parse(captured.out());
 * ```
 */
export function capturedIo(env: Record<string, string> = {}): {
  io: CommandIo;
  out(): string;
  err(): string;
} {
  let out = '';
  let err = '';
  const io: CommandIo = {
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      err += text;
    },
    env,
    isTTY: false,
    signal: new AbortController().signal,
  };
  return { io, out: () => out, err: () => err };
}
