/**
 * What `--help` names, the command accepts: every flag a command's help mentions (in its usage, its
 * description, its options, its variables) is run, and none is refused as unknown. A flag written after
 * another command's name (`worker --prune-every` in prune's help) is run with that command.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { renderHelp } from '../src/help.ts';
import { main } from '../src/main.ts';
import type { CommandSpec, FlagSpec } from '../src/spec.ts';
import { COMMAND_SPECS } from '../src/specs/index.ts';
import { captureIo } from './capture-io.ts';

const dir = mkdtempSync(join(tmpdir(), 'postback-help-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The SQS client reads credentials from the process: give it some, so it fails at once (port 1).
vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
vi.stubEnv('AWS_REGION', 'us-east-1');
vi.stubEnv('AWS_MAX_ATTEMPTS', '1');

const byName = new Map(COMMAND_SPECS.map((spec) => [spec.name, spec]));
const NAMES = [...byName.keys()].join('|');
/**
 * `--flag` (or a family, `--fail-on-*`), and the command named right before it, if any
 * (`worker --prune-every`).
 */
const MENTION = new RegExp(`(?:\\b(${NAMES}) )?(?<![\\w-])--([a-z][a-z0-9-]*)(\\*)?`, 'g');

/** The flags a command's help names, each with the command it belongs to (a family: each of its flags). */
function mentioned(spec: CommandSpec): Array<{ command: string; flag: string }> {
  const found = new Map<string, { command: string; flag: string }>();
  for (const [, other, flag, family] of renderHelp(spec).matchAll(MENTION)) {
    const command = other ?? spec.name;
    const members =
      family === undefined
        ? [flag as string]
        : Object.keys((byName.get(command) as CommandSpec).flags).filter((f) => f.startsWith(flag as string));
    expect(members.length, `${spec.name} --help names ${command} --${flag}${family ?? ''}`).toBeGreaterThan(
      0,
    );
    for (const member of members) found.set(`${command} --${member}`, { command, flag: member });
  }
  return [...found.values()];
}

/** A value the flag's own checks accept, pointing at nothing real (a closed port, a file in a temp folder). */
function valueFor(name: string, flag: FlagSpec): string[] {
  if (flag.type === 'boolean') return [];
  if (flag.choices !== undefined) return [flag.choices[0] as string];
  if (flag.type === 'integer') return [String(flag.min ?? 1)];
  if (flag.type === 'duration') return ['1h'];
  if (name === 'pg') return ['postgres://postgres@127.0.0.1:1/none'];
  if (name === 'sqs') return ['http://127.0.0.1:1/000000000000/none'];
  if (name.includes('url')) return ['http://127.0.0.1:1'];
  return [join(dir, `${name}.value`)];
}

describe('every flag that --help names is accepted', () => {
  it.each(COMMAND_SPECS.map((spec) => [spec.name, spec] as const))(
    '%s',
    async (_, spec) => {
      const flags = mentioned(spec);
      expect(flags.length).toBeGreaterThan(0);
      for (const { command, flag } of flags) {
        const target = byName.get(command) as CommandSpec;
        const table: FlagSpec | undefined =
          flag === 'help' ? { type: 'boolean', help: '' } : target.flags[flag];
        expect(
          table,
          `${spec.name} --help names ${command} --${flag}, which ${command} does not have`,
        ).toBeDefined();
        const args = [command, `--${flag}`, ...valueFor(flag, table as FlagSpec)];
        // A server command listens on a free port, and every command is asked to stop at once.
        if ('port' in target.flags && flag !== 'port') args.push('--port', '0');
        const io = captureIo();
        io.controller.abort();
        const code = await main(args, io);
        expect(io.err(), args.join(' ')).not.toMatch(/Unknown option|unexpected argument/i);
        expect(code, `${args.join(' ')}: ${io.err()}`).toBeGreaterThanOrEqual(0);
      }
    },
    60_000,
  );
});
