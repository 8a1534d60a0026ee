/**
 * Every worker flag may come from an environment variable named after it (`--batch-size` ⇄
 * `POSTBACK_BATCH_SIZE`); the flag wins; `--help` names each flag's variable.
 */
import { readFileSync } from 'node:fs';
import { clientOptionsSchema } from '@postback/client';
import { dispatcherOptionsSchema } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/args.ts';
import { parseCommand } from '../src/flags.ts';
import { renderHelp } from '../src/help.ts';
import { envOf, flagEnvName } from '../src/spec.ts';
import { COMMAND_SPECS } from '../src/specs/index.ts';
import { workerSpec } from '../src/specs/worker.ts';
import { TUNING_FLAGS, tuningOptions } from '../src/worker-options.ts';

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
    // The bounds are the Dispatcher option's own (core's schema: concurrency 1..1000).
    expect(usage([], { POSTBACK_CONCURRENCY: '0' })).toBe(
      "POSTBACK_CONCURRENCY (--concurrency) must be an integer 1..1000, got '0'",
    );
    expect(usage(['--lease-ms', '99'], {})).toBe("--lease-ms must be an integer of at least 100, got '99'");
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

  it("the tuning flags are the Dispatcher's and the client's options: their defaults, their values", () => {
    const stubs = {
      outbox: Object.fromEntries(
        ['claim', 'complete', 'retry', 'fail', 'release', 'extendLease', 'stats'].map((m) => [m, () => {}]),
      ),
      client: { conversions: { confirm: () => {}, refund: () => {} } },
    };
    // Nothing given: exactly what the schemas resolve by themselves.
    const defaults = tuningOptions(parse([]));
    const dispatcher = dispatcherOptionsSchema.parse(stubs);
    for (const [key, value] of Object.entries(defaults.dispatcher))
      expect(value, key).toEqual(dispatcher[key as keyof typeof dispatcher]);
    expect(defaults.client.timeout).toBe(clientOptionsSchema.parse({ baseUrl: 'http://x' }).timeout);
    // Given: each value lands on its option, under the option's own name.
    const given = tuningOptions(
      parse(
        ['--batch-size', '7', '--poll-ms', '20', '--backoff-min-ms', '0', '--request-timeout-ms', '900'],
        {
          POSTBACK_BACKOFF_MAX_MS: '5000',
        },
      ),
    );
    expect(given.dispatcher).toMatchObject({
      batchSize: 7,
      pollIntervalMs: 20,
      backoff: { baseMs: dispatcher.backoff.baseMs, maxMs: 5000, minMs: 0 },
    });
    expect(given.client).toEqual({ timeout: 900 });
    // Every tuning flag is in the table, --help names the option it sets, and so does the README's row
    // (with the schema's default).
    const help = renderHelp(workerSpec);
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8').split('\n');
    for (const [flag, { options, path }] of Object.entries(TUNING_FLAGS)) {
      const table = workerSpec.flags[flag as keyof typeof TUNING_FLAGS];
      expect(help).toContain(`option ${path.join('.')}`);
      const row = readme.find((line) => line.startsWith(`| \`--${flag} N\` |`))?.split(' | ');
      expect(row?.[1], flag).toBe(
        `\`${path.join('.')}\` (${options === 'client' ? 'client' : 'Dispatcher'})`,
      );
      expect(Number(row?.[2]?.replaceAll(' ', '')), flag).toBe(table.default);
    }
  });

  it('--schema (POSTBACK_PG_SCHEMA) is an option of every command that opens a backend', () => {
    for (const spec of COMMAND_SPECS) {
      if (!('pg' in spec.flags)) continue;
      expect(Object.keys(spec.flags), spec.name).toContain('schema');
      expect(envOf(spec, 'schema'), spec.name).toBe('POSTBACK_PG_SCHEMA');
    }
  });
});
