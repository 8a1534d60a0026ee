/** @postback/cli — the `postback` command, also callable in-process. */
export { type Command, main } from './main.ts';
export type { CommandIo } from './io.ts';
