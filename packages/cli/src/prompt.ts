/**
 * A yes/no question on the terminal, for commands that destroy data (`dlq purge`). Injected so tests can
 * answer it; the real one asks on stderr (stdout may be JSON) and reads one line from stdin.
 */
import { createInterface } from 'node:readline/promises';

/** Where a confirmation comes from. */
export interface Prompt {
  /** Whether a person can answer: stdin is a terminal. */
  interactive(): boolean;
  /** Asks `question` and resolves with the line typed (without its newline). */
  ask(question: string): Promise<string>;
}

/**
 * The process's terminal: asks on stderr, reads stdin.
 *
 * @example
 * ```ts
 * if (stdinPrompt.interactive() && /^y(es)?$/i.test(await stdinPrompt.ask('purge 3 jobs? [y/N] '))) purge();
 * ```
 */
export const stdinPrompt: Prompt = {
  interactive: () => Boolean(process.stdin.isTTY),
  async ask(question) {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  },
};

/** Whether an answer is a yes (`y`, `yes`, any case); anything else, an empty line included, is a no. */
export function isYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}
