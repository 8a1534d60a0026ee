/**
 * `@postback/postgres` and `@postback/sqs` are optional peer dependencies of the CLI: a SQLite-only
 * install has neither, and `--pg`/`--sqs`/`migrate` must then say which package to install (exit 2)
 * instead of crashing on an import. Checked in-process with injected loaders, and for real by running the
 * CLI from a copy of its sources in a temporary project whose node_modules lack those packages.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BackendLoaders, openBackend } from '../src/backends/index.ts';
import { explainMissingPackage, MissingPackageError } from '../src/backends/packages.ts';
import { createStatusCommand } from '../src/commands/status.ts';
import { captureIo } from './capture-io.ts';

const CLI_DIR = fileURLToPath(new URL('../', import.meta.url));
const PACKAGES = fileURLToPath(new URL('../../', import.meta.url));

/** What Node's ESM loader throws for an import of a package that is not installed. */
function notFound(specifier: string): Error {
  return Object.assign(
    new Error(`Cannot find package '${specifier}' imported from /app/node_modules/@postback/cli/dist/x.js`),
    { code: 'ERR_MODULE_NOT_FOUND' },
  );
}

const without = (specifier: string): BackendLoaders => ({
  sqlite: () => import('../src/backends/sqlite.ts'),
  postgres: () => Promise.reject(notFound(specifier)),
  sqs: () => Promise.reject(notFound(specifier)),
});

describe('a backend package that is not installed', () => {
  it('--pg without @postback/postgres names the package and the install command', async () => {
    const opening = openBackend({ pg: 'postgres://app:s3cret@db/shop' }, {}, without('@postback/postgres'));
    await expect(opening).rejects.toBeInstanceOf(MissingPackageError);
    await expect(opening).rejects.toThrow(
      /^--pg needs @postback\/postgres: npm install @postback\/postgres pg$/,
    );
  });

  it('--pg without pg names pg, the peer dependency of @postback/postgres', async () => {
    const opening = openBackend({ pg: 'postgres://db/shop' }, {}, without('pg'));
    await expect(opening).rejects.toThrow(
      /^--pg needs pg \(needed by @postback\/postgres\): npm install pg$/,
    );
  });

  it('--sqs without @postback/sqs names the package', async () => {
    const opening = openBackend({ sqs: 'https://sqs.example/1/q' }, {}, without('@postback/sqs'));
    await expect(opening).rejects.toThrow(/^--sqs needs @postback\/sqs: npm install @postback\/sqs$/);
  });

  it('a command exits 2 with one line naming the package (not 3: nothing to reach)', async () => {
    const ctx = {
      openBackend: (flags: { pg?: string }, env: Record<string, string | undefined>) =>
        openBackend(flags, env, without('@postback/postgres')),
      now: () => Date.now(),
    };
    const io = captureIo();
    expect(await createStatusCommand(ctx).run(['--pg', 'postgres://app:s3cret@db/shop'], io)).toBe(2);
    expect(io.err()).toBe(
      'postback status: --pg needs @postback/postgres: npm install @postback/postgres pg\n',
    );
  });

  it('other missing modules and other errors keep their own message', () => {
    const other = notFound('left-pad');
    expect(explainMissingPackage(other, '--pg')).toBe(other);
    const plain = new Error("Cannot find package '@postback/postgres'");
    expect(explainMissingPackage(plain, '--pg')).toBe(plain);
    // A deep import and CommonJS wording are recognised too.
    const deep = Object.assign(new Error("Cannot find module 'pg/lib/client'"), { code: 'MODULE_NOT_FOUND' });
    expect(explainMissingPackage(deep, '--pg')).toMatchObject({ packageName: 'pg', flag: '--pg' });
    const aws = explainMissingPackage(notFound('@aws-sdk/client-sqs'), '--sqs');
    expect((aws as Error).message).toBe(
      '--sqs needs @aws-sdk/client-sqs (needed by @postback/sqs): npm install @aws-sdk/client-sqs',
    );
  });
});

describe('the CLI in a SQLite-only project (no @postback/postgres, no @postback/sqs)', () => {
  let project: string;
  let cliCopy: string;

  beforeAll(() => {
    // The CLI's sources outside any node_modules (Node strips types only there), next to a node_modules
    // holding only its regular dependencies, linked to this checkout's packages.
    project = mkdtempSync(join(tmpdir(), 'postback-sqlite-only-'));
    cliCopy = join(project, 'cli');
    for (const part of ['bin', 'src', 'package.json'])
      cpSync(join(CLI_DIR, part), join(cliCopy, part), { recursive: true });
    const deps = Object.keys(JSON.parse(readFileSync(join(CLI_DIR, 'package.json'), 'utf8')).dependencies);
    mkdirSync(join(project, 'node_modules', '@postback'), { recursive: true });
    for (const dep of deps) {
      // Our packages from this checkout; a third-party dependency (zod, for doctor's options) as installed.
      const target = dep.startsWith('@postback/')
        ? join(PACKAGES, dep.slice('@postback/'.length))
        : join(PACKAGES, '..', 'node_modules', dep);
      expect(dep, 'no backend driver among the regular dependencies').not.toMatch(/^(pg|@aws-sdk\/.*)$/);
      symlinkSync(target, join(project, 'node_modules', dep), 'dir');
    }
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const run = (...args: string[]) =>
    spawnSync(
      process.execPath,
      ['--conditions=@postback/source', join(cliCopy, 'bin', 'postback.js'), ...args],
      {
        cwd: project,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', POSTBACK_API_KEY: 'test-key', NODE_OPTIONS: '' },
        timeout: 30_000,
      },
    );

  it('the postgres and sqs packages are really absent', () => {
    const probe = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "await import('@postback/postgres')"],
      { cwd: cliCopy, encoding: 'utf8' },
    );
    expect(probe.status).not.toBe(0);
    expect(probe.stderr).toContain("Cannot find package '@postback/postgres'");
  });

  it('status --pg exits 2 naming @postback/postgres', () => {
    const result = run('status', '--pg', 'postgres://app:s3cret@127.0.0.1:1/shop');
    expect(result.stderr).toBe(
      'postback status: --pg needs @postback/postgres: npm install @postback/postgres pg\n',
    );
    expect(result.status).toBe(2);
  });

  it('migrate exits 2 naming @postback/postgres (its help still works)', () => {
    const result = run('migrate', '--pg', 'postgres://127.0.0.1:1/shop');
    expect(result.stderr).toBe(
      'postback migrate: --pg needs @postback/postgres: npm install @postback/postgres pg\n',
    );
    expect(result.status).toBe(2);
    expect(run('migrate', '--help').status).toBe(0);
  });

  it('status --sqs exits 2 naming @postback/sqs', () => {
    const result = run('status', '--sqs', 'https://sqs.us-east-1.amazonaws.com/1/q.fifo');
    expect(result.stderr).toBe('postback status: --sqs needs @postback/sqs: npm install @postback/sqs\n');
    expect(result.status).toBe(2);
  });

  it('the SQLite backend works', () => {
    const result = run(
      'worker',
      '--db',
      join(project, 'postback.db'),
      '--drain',
      '--base-url',
      'http://127.0.0.1:1',
      '--log',
      'json',
      // The worker logs on stderr: above info only, so that any other line there is a failure.
      '--log-level',
      'warn',
    );
    // Node 22 (engines allow >= 22.13) flags node:sqlite as experimental and says so on stderr, once per
    // thread that loads it; Node 24 does not. Nothing else may be written there.
    const nodeNotice =
      /^\(node:\d+\) ExperimentalWarning: SQLite is an experimental feature.*\n\(Use `node --trace-warnings \.\.\.` to show where the warning was created\)\n/gm;
    expect(
      process.versions.node.startsWith('22.') ? result.stderr.replace(nodeNotice, '') : result.stderr,
    ).toBe('');
    expect(result.status).toBe(0);
  });
});
