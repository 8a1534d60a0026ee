/** @postback/cli — the `postback` command, also callable in-process. */

export type { CommandIo } from './io.ts';
export { type Command, main } from './main.ts';
