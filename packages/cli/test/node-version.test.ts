import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BackendLoaders, MIN_NODE_VERSION, openBackend } from '../src/backends/index.ts';
import { createStatusCommand } from '../src/commands/status.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** What an `import('node:sqlite')` throws on a Node.js without it (Node 20, or 22 before 22.13). */
function noSqlite(): Error {
  return Object.assign(new Error('No such built-in module: node:sqlite'), {
    code: 'ERR_UNKNOWN_BUILTIN_MODULE',
  });
}

const withoutSqlite: BackendLoaders = {
  sqlite: () => Promise.reject(noSqlite()),
  postgres: () => import('../src/backends/postgres.ts'),
  sqs: () => import('../src/backends/sqs.ts'),
};

let db: DbFixture;
beforeEach(() => {
  db = dbFixture();
});
afterEach(() => db.cleanup());

describe('on a Node.js without node:sqlite', () => {
  it('opening the SQLite backend says which Node.js it needs and which one is running', async () => {
    const opening = openBackend({ db: db.file }, {}, withoutSqlite);
    await expect(opening).rejects.toThrow(/needs Node\.js >= 22\.13\.0 \(node:sqlite is missing\)/);
    await expect(opening).rejects.toThrow(`this is Node.js ${process.versions.node}`);
  });

  it('a command exits 3 with that message on one line', async () => {
    writeFileSync(db.file, '');
    const ctx = {
      openBackend: (flags: { db?: string }, env: Record<string, string | undefined>) =>
        openBackend(flags, env, withoutSqlite),
      now: () => Date.now(),
    };
    const io = captureIo();
    expect(await createStatusCommand(ctx).run(['--db', db.file], io)).toBe(3);
    expect(io.err()).toMatch(
      /^postback status: cannot open the backend: the SQLite backend needs Node\.js >= 22\.13/,
    );
    expect(io.err().trimEnd().split('\n')).toHaveLength(1);
  });

  it('other import failures keep their own message', async () => {
    const broken: BackendLoaders = {
      ...withoutSqlite,
      sqlite: () => Promise.reject(new Error('disk on fire')),
    };
    await expect(openBackend({ db: db.file }, {}, broken)).rejects.toThrow(/^disk on fire$/);
  });
});

describe('the minimum Node.js', () => {
  it('is stated the same, as >= the CLI minimum, in the engines of the root and of every package and example', () => {
    const [major, minor] = MIN_NODE_VERSION.split('.');
    const expected = `>=${major}.${minor}`;
    const manifests = [
      'package.json',
      ...['packages', 'examples'].flatMap((dir) =>
        readdirSync(join(ROOT, dir), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => `${dir}/${entry.name}/package.json`),
      ),
    ];
    const engines = Object.fromEntries(
      manifests.map((file) => [file, JSON.parse(readFileSync(join(ROOT, file), 'utf8')).engines?.node]),
    );
    expect(Object.keys(engines).length).toBeGreaterThan(10);
    for (const [file, range] of Object.entries(engines))
      expect({ file, range }).toEqual({ file, range: expected });
  });
});
