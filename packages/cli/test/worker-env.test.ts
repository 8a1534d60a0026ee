/**
 * Every worker flag may come from an environment variable named after it (`--batch-size` ⇄
 * `POSTBACK_BATCH_SIZE`); the flag wins; `--help` names each flag's variable.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/args.ts';
import { parseCommand } from '../src/flags.ts';
import { renderHelp } from '../src/help.ts';
import { envOf, flagEnvName } from '../src/spec.ts';
import { COMMAND_SPECS } from '../src/specs/index.ts';
import { workerSpec } from '../src/specs/worker.ts';

const base = { POSTBACK_API_KEY: 'k', POSTBACK_API_URL: 'http://127.0.0.1:1' };
const parse = (args: string[], env: Record<string, string> = {}) =>
  parseCommand(workerSpec, args, { ...base, ...env }).values;
const usage = (args: string[], env: Record<string, string>) => {
  try {
    parse(args, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('no usage error');
};

describe('worker flags from the environment', () => {
  it('names each variable after its flag', () => {
    expect(flagEnvName('batch-size')).toBe('POSTBACK_BATCH_SIZE');
    expect(envOf(workerSpec, 'concurrency')).toBe('POSTBACK_CONCURRENCY');
    expect(envOf(workerSpec, 'base-url')).toBe('POSTBACK_API_URL');
    expect(envOf(workerSpec, 'schema')).toBe('POSTBACK_PG_SCHEMA');
    expect(envOf(workerSpec, 'log-level')).toBe('POSTBACK_LOG_LEVEL');
  });

  it('an environment variable sets a flag: integers, durations, choices, switches and the backend', () => {
    const values = parse([], {
      POSTBACK_DB: 'shop.db',
      POSTBACK_CONCURRENCY: '3',
      POSTBACK_PRUNE_EVERY: 'off',
      POSTBACK_PRUNE_OLDER_THAN: '7d',
      POSTBACK_LOG_LEVEL: 'debug',
      POSTBACK_LOG: 'json',
      POSTBACK_DRAIN: 'true',
    });
    expect(values).toMatchObject({
      db: 'shop.db',
      concurrency: 3,
      'prune-every': 0,
      'prune-older-than': 7 * 86_400_000,
      'log-level': 'debug',
      log: 'json',
      drain: true,
    });
    expect(parse([], { POSTBACK_DRAIN: '0' }).drain).toBe(false);
  });

  it('the flag beats its variable, and a backend flag hides the variables of the other backends', () => {
    const env = { POSTBACK_CONCURRENCY: '3', POSTBACK_DB: 'env.db', POSTBACK_LOG_LEVEL: 'debug' };
    expect(parse(['--concurrency', '5', '--log-level', 'warn'], env)).toMatchObject({
      concurrency: 5,
      'log-level': 'warn',
      db: 'env.db',
    });
    const pg = parse(['--pg', 'postgres://db/shop'], env);
    expect(pg).toMatchObject({ pg: 'postgres://db/shop', db: undefined });
  });

  it('a bad value from a variable is a usage error naming the variable', () => {
    expect(usage([], { POSTBACK_CONCURRENCY: '0' })).toBe(
      "POSTBACK_CONCURRENCY (--concurrency) must be a positive integer, got '0'",
    );
    expect(usage([], { POSTBACK_DRAIN: 'maybe' })).toMatch(/^POSTBACK_DRAIN must be true or false/);
    expect(usage([], { POSTBACK_LOG_LEVEL: 'loud' })).toMatch(/^POSTBACK_LOG_LEVEL \(--log-level\) must be/);
  });

  it('--help names the variable of every worker flag, and the rule', () => {
    const help = renderHelp(workerSpec);
    for (const name of Object.keys(workerSpec.flags)) {
      const line = help.split('\n').find((l) => l.includes(`--${name} `) || l.endsWith(`--${name}`));
      expect(help, name).toContain(`env ${envOf(workerSpec, name)}`);
      expect(line, name).toBeDefined();
    }
    expect(help).toMatch(/POSTBACK_<FLAG> +every other option, named after the flag/);
  });

  it('--schema (POSTBACK_PG_SCHEMA) is an option of every command that opens a backend', () => {
    for (const spec of COMMAND_SPECS) {
      if (!('pg' in spec.flags)) continue;
      expect(Object.keys(spec.flags), spec.name).toContain('schema');
      expect(envOf(spec, 'schema'), spec.name).toBe('POSTBACK_PG_SCHEMA');
    }
  });
});
