/**
 * Renders `--help` from a command's table (`spec.ts`), and the overview `postback --help` prints from
 * every table's summary. Nothing here is written by hand per command, so the help cannot drift from the
 * flags the parser accepts.
 */
import { columnWidths } from './format.ts';
import { type CommandSpec, type EnvSpec, envOf, type FlagSpec, flagEnvName } from './spec.ts';

/** Two columns: names padded to the widest, continuation lines of the text indented to match. */
function columns(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const [widest = 0] = columnWidths(rows, 1);
  const width = widest + 2;
  return rows.flatMap(([left, right]) =>
    right.split('\n').map((line, i) => `  ${(i === 0 ? left : '').padEnd(width)}${line}`.trimEnd()),
  );
}

function flagText(flag: FlagSpec, variable: string | undefined): string {
  const notes: string[] = [];
  if (flag.required) notes.push('required');
  if (flag.default !== undefined) notes.push(`default ${flag.default}`);
  if (flag.multiple) notes.push('repeatable');
  if (variable !== undefined) notes.push(`env ${variable}`);
  return notes.length === 0 ? flag.help : `${flag.help} (${notes.join('; ')})`;
}

/**
 * The `--help` text of one command: usage, description, environment, options, exit codes.
 *
 * @example
 * ```ts
 * io.stdout(renderHelp(statusSpec)); // "Usage: postback status (--db FILE | --pg URL | --sqs URL) ..."
 * ```
 */
export function renderHelp(spec: CommandSpec): string {
  const [first, ...more] = spec.usage;
  const lines = [`Usage: ${first ?? `postback ${spec.name}`}`, ...more.map((line) => `       ${line}`)];
  lines.push('', spec.description);
  // Required variables first, then the flags' fallbacks, then the rest. A variable that goes with a flag
  // is shown only when the command has that flag.
  const vars = (spec.env ?? []).filter((v) => v.flag === undefined || Object.hasOwn(spec.flags, v.flag));
  const varHelp = (v: EnvSpec) => (v.flag === undefined ? v.help : `--${v.flag}: ${v.help}`);
  const env: Array<[string, string]> = vars
    .filter((v) => v.required)
    .map((v) => [v.name, `${varHelp(v)} (required)`]);
  for (const [name, flag] of Object.entries(spec.flags))
    if (typeof flag.env === 'string') env.push([flag.env, `--${name} when the flag is not given`]);
  // The rule's example is a flag of this very command.
  const example = Object.entries(spec.flags).find(
    ([name, flag]) => name.includes('-') && flag.type !== 'boolean' && flag.env === undefined,
  )?.[0];
  if (spec.flagEnv && example !== undefined) {
    env.push([
      'POSTBACK_<FLAG>',
      `every other option, named after the flag (--${example}: ${flagEnvName(example)};\n` +
        'switches take 1/0, true/false); the flag wins over the variable',
    ]);
  }
  for (const v of vars) if (!v.required) env.push([v.name, varHelp(v)]);
  if (env.length > 0) lines.push('', 'Environment:', ...columns(env));
  const flags: Array<[string, string]> = Object.entries(spec.flags).map(([name, flag]) => [
    `${flag.short === undefined ? '' : `-${flag.short}, `}--${name}${flag.value === undefined ? '' : ` ${flag.value}`}`,
    flagText(flag, envOf(spec, name)),
  ]);
  flags.push(['-h, --help', 'show this help']);
  lines.push('', 'Options:', ...columns(flags), '', `Exit codes: ${spec.exitCodes}`);
  return `${lines.join('\n')}\n`;
}

/**
 * What `postback --help` prints: every command with its summary.
 *
 * @example
 * ```ts
 * io.stdout(renderOverview(COMMAND_SPECS));
 * ```
 */
export function renderOverview(specs: readonly CommandSpec[]): string {
  return [
    'Usage: postback <command> [options]',
    '',
    'Commands:',
    ...columns(specs.map((spec) => [spec.name, spec.summary])),
    '',
    'Options:',
    ...columns([
      ['-h, --help', 'show this help'],
      ['--version', 'print the version of postback'],
    ]),
    '',
    'Run `postback <command> --help` for the options of one command.',
    '',
  ].join('\n');
}
