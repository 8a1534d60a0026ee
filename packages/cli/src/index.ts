/** @postback/cli — the `postback` command, also callable in-process. */

export type { Command } from './command.ts';
export {
  CHECK_NAMES,
  type CheckName,
  type CheckStatus,
  DEFAULT_NOT_S2S_PATTERN,
  DEFAULT_RECENT_WITHIN_MS,
  type DoctorCheck,
  type DoctorOptions,
  type DoctorReport,
  doctor,
  doctorOptionsSchema,
  type ResolvedDoctorOptions,
  renderDoctorOptionsTable,
} from './doctor/index.ts';
export type { CommandIo } from './io.ts';
export { main } from './main.ts';
export type { CommandSpec, EnvSpec, FlagSpec, FlagType } from './spec.ts';
