/** @postback/cli — the `postback` command, also callable in-process. */

export type { Command } from './command.ts';
export type { CommandIo } from './io.ts';
export { main } from './main.ts';
export type { CommandSpec, EnvSpec, FlagSpec, FlagType } from './spec.ts';
