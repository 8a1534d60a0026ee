import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/args.ts';
import { parseCommand } from '../src/flags.ts';
import { renderHelp } from '../src/help.ts';
import { COMMAND_LOADERS, main } from '../src/main.ts';
import type { CommandSpec } from '../src/spec.ts';
import { COMMAND_SPECS } from '../src/specs/index.ts';
import { captureIo } from './capture-io.ts';

const spec = {
  name: 'demo',
  summary: 'A command for tests',
  usage: ['postback demo --name X'],
  description: 'Does nothing.',
  env: [{ name: 'DEMO_KEY', help: 'the key', required: true }],
  flags: {
    name: { type: 'string', value: 'X', help: 'a name', required: true },
    url: { type: 'string', value: 'URL', help: 'a URL', required: true, env: 'DEMO_URL' },
    count: { type: 'integer', value: 'N', help: 'a count', default: 3 },
    port: { type: 'integer', value: 'N', help: 'a port', min: 0, max: 65_535 },
    log: { type: 'string', value: 'F', help: 'a format', choices: ['text', 'json'], default: 'text' },
    tag: { type: 'string', value: 'T', help: 'a tag', multiple: true },
    quiet: { type: 'boolean', help: 'say less' },
  },
  exitCodes: '0 ok.',
} as const satisfies CommandSpec;

const env = { DEMO_KEY: 'k', DEMO_URL: 'http://x' };
const usageError = (args: string[], environment: Record<string, string> = env) => {
  try {
    parseCommand(spec, args, environment);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('no usage error');
};

describe('a command table', () => {
  it('gives checked values: defaults, env fallbacks, integers, lists and switches', () => {
    const { values, help } = parseCommand(spec, ['--name', 'a', '--tag', 'x', '--tag', 'y'], env);
    expect(help).toBe(false);
    expect(values).toEqual({
      name: 'a',
      url: 'http://x',
      count: 3,
      port: undefined,
      log: 'text',
      tag: ['x', 'y'],
      quiet: false,
    });
    expect(parseCommand(spec, ['--name', 'a', '--url', 'u', '--port', '0'], env).values).toMatchObject({
      url: 'u',
      port: 0,
    });
  });

  it('refuses missing, malformed and unknown flags and missing variables with one wording', () => {
    expect(usageError([])).toBe('--name is required');
    expect(usageError(['--name', 'a'], { DEMO_KEY: 'k', DEMO_URL: '' })).toBe(
      'give --url URL or set DEMO_URL',
    );
    expect(usageError(['--name', 'a'], { DEMO_URL: 'u' })).toBe('set DEMO_KEY to the key');
    expect(usageError(['--name', 'a', '--count', '0'])).toBe("--count must be a positive integer, got '0'");
    expect(usageError(['--name', 'a', '--port', '70000'])).toBe(
      "--port must be an integer 0..65535, got '70000'",
    );
    expect(usageError(['--name', 'a', '--log', 'xml'])).toBe("--log must be text or json, got 'xml'");
    expect(usageError(['--name', 'a', '--nope'])).toMatch(/--nope/);
    expect(usageError(['--name', 'a', 'stray'])).toMatch(/stray/);
  });

  it('stops at --help before any check', () => {
    expect(parseCommand(spec, ['--help'], {}).help).toBe(true);
  });

  it('renders the help from the table: usage, variables, every flag with its notes, exit codes', () => {
    const help = renderHelp(spec);
    expect(help).toMatch(/^Usage: postback demo --name X\n/);
    expect(help).toMatch(/DEMO_KEY +the key \(required\)/);
    expect(help).toMatch(/DEMO_URL +--url when the flag is not given/);
    expect(help).toMatch(/--count N +a count \(default 3\)/);
    expect(help).toMatch(/--tag T +a tag \(repeatable\)/);
    expect(help).toMatch(/-h, --help +show this help/);
    expect(help).toMatch(/Exit codes: 0 ok\.\n$/);
  });
});

describe('postback', () => {
  it('has one table per command, named as the command', () => {
    expect(COMMAND_SPECS.map((s) => s.name)).toEqual(Object.keys(COMMAND_LOADERS));
  });

  it.each(Object.keys(COMMAND_LOADERS))('%s prints the help its table renders', async (name) => {
    const io = captureIo();
    expect(await main([name, '--help'], io)).toBe(0);
    const table = COMMAND_SPECS.find((s) => s.name === name) as CommandSpec;
    expect(io.out()).toBe(renderHelp(table));
    for (const flag of Object.keys(table.flags)) expect(io.out()).toContain(`--${flag}`);
  });

  it('--help lists every command with its summary', async () => {
    const io = captureIo();
    expect(await main(['--help'], io)).toBe(0);
    const lines = io.out().split('\n');
    for (const { name, summary } of COMMAND_SPECS)
      expect(lines.some((line) => line.startsWith(`  ${name} `) && line.endsWith(` ${summary}`))).toBe(true);
  });

  it('--version prints the version of the CLI package', async () => {
    const io = captureIo();
    expect(await main(['--version'], io)).toBe(0);
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(io.out()).toBe(`${version}\n`);
  });
});
