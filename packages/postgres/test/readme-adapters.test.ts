/**
 * The README's adapter sections ("Inside your query builder's transaction") type-check against the
 * adapters and the libraries' real types. Checked from this package, whose dev dependencies hold the
 * libraries (npm keeps drizzle-orm in packages/postgres/node_modules, out of reach of the repo-wide
 * README check, where the Drizzle block is marked a fragment for that reason).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const PKG = join(import.meta.dirname, '..');
const ROOT = join(PKG, '..', '..');
const OUT = join(import.meta.dirname, `.readme-adapters-${process.pid}`);
/** What a block marked as a fragment for the repo-wide check assumes (an order and its click). */
const FRAGMENT_PRELUDE =
  "import type { ClickStamp } from '@postback/core';\n" +
  'declare const order: { id: string; totalMicros: number }, click: ClickStamp;\n';

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

function adapterBlocks(): Array<{ line: number; prelude: string; code: string }> {
  const readme = readFileSync(join(PKG, 'README.md'), 'utf8');
  const start = readme.indexOf("### Inside your query builder's transaction");
  const end = readme.indexOf('\n## ', start);
  const section = readme.slice(start, end);
  const firstLine = readme.slice(0, start).split('\n').length;
  const blocks = [];
  for (const m of section.matchAll(
    /(?:<!--\s*readme-check:\s*(declare|fragment)([\s\S]*?)-->\s*)?```ts\n([\s\S]*?)\n```/g,
  )) {
    const [, mode, body = '', code = ''] = m;
    const prelude = mode === 'declare' ? `${body.replace(/^[^\n]*\n/, '').trim()}\n` : FRAGMENT_PRELUDE;
    blocks.push({
      line: firstLine + section.slice(0, m.index + m[0].indexOf('```ts')).split('\n').length - 1,
      prelude,
      code,
    });
  }
  return blocks;
}

it('type-checks every TypeScript block of the adapter sections', () => {
  const blocks = adapterBlocks();
  expect(blocks.length).toBeGreaterThanOrEqual(5); // postgres.js, Kysely, Drizzle, Prisma, anything else
  mkdirSync(OUT, { recursive: true });
  const files = blocks.map((b) => {
    const name = `block_L${b.line}.ts`;
    writeFileSync(join(OUT, name), `${b.prelude}${b.code}\nexport {};\n`);
    return name;
  });
  writeFileSync(
    join(OUT, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.base.json'),
      compilerOptions: { noEmit: true, declaration: false, declarationMap: false, sourceMap: false },
      files,
    }),
  );
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(OUT, 'tsconfig.json'), '--pretty', 'false'], {
    cwd: PKG,
    encoding: 'utf8',
  });
  // Errors inside the package's own sources are the repository type-check's to report.
  const errors = `${run.stdout}${run.stderr}`.split('\n').filter((l) => l.includes('.readme-adapters-'));
  expect(errors).toEqual([]);
}, 120_000);
