/**
 * Every TypeScript block of every README (root, `packages/*`, `examples/*`, `bench/`) is type-checked,
 * so the READMEs cannot drift from the code. Each ```ts / ```typescript block is written to its own
 * module in a temporary folder inside the repository (so workspace packages and their dependencies
 * resolve, through the `@postback/source` condition) and one `tsc --noEmit` runs over all of them with
 * the repository's strict settings (`tsconfig.base.json`). An error is reported at its README line.
 *
 * Two annotations, an HTML comment right before the fence (blank lines between are allowed; GitHub
 * does not render it), cover blocks that are not whole files — see `readme-blocks.ts`:
 *
 * - `<!-- readme-check: declare ... -->`: the comment's body (imports, `declare const x: T;`) is
 *   prepended to the block, which is then checked. For API snippets that use a value the reader has
 *   (a client, a click): what they assume is stated and typed, and the snippet still cannot drift.
 * - `<!-- readme-check: fragment — why -->`: the block is not checked at all. Rare, and the reason
 *   is required; the test prints how many there are and where.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extractReadmeBlocks, type ReadmeBlock, readmeFiles } from './helpers/readme-blocks.ts';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'test', `.readme-code-${process.pid}`);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe('README code blocks', () => {
  const blocks = readmeFiles(ROOT).flatMap((file) => extractReadmeBlocks(ROOT, file));
  const checked = blocks.filter((b) => b.mode !== 'fragment');
  const fragments = blocks.filter((b) => b.mode === 'fragment');

  it('every fragment opt-out gives its reason', () => {
    for (const b of fragments) expect(b.reason, `${b.readme}:${b.fenceLine}`).toMatch(/\w{3,}/);
    console.info(
      `readme-code: ${checked.length} TypeScript blocks type-checked (${checked.filter((b) => b.mode === 'declare').length} with a declare comment), ${fragments.length} opted out as fragments` +
        fragments.map((b) => `\n  ${b.readme}:${b.fenceLine} — ${b.reason}`).join(''),
    );
  });

  it('every other TypeScript block type-checks under the strict settings', () => {
    mkdirSync(OUT, { recursive: true });
    const byFile = new Map<string, ReadmeBlock>();
    checked.forEach((b, i) => {
      const name = `${b.readme.replaceAll(/[^A-Za-z0-9]+/g, '_')}_L${b.fenceLine}_${i}.ts`;
      // `export {}` makes every block a module: top-level await works and names never collide.
      writeFileSync(join(OUT, name), `${b.prelude}${b.code}\nexport {};\n`);
      byFile.set(name, b);
    });
    writeFileSync(
      join(OUT, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.base.json',
        compilerOptions: { noEmit: true, declaration: false, declarationMap: false, sourceMap: false },
        files: [...byFile.keys()],
      }),
    );
    const run = spawnSync(process.execPath, [TSC, '-p', join(OUT, 'tsconfig.json'), '--pretty', 'false'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    // `test/.readme-code-1/README_md_L31_0.ts(5,10): error TS2304: …` → `README.md:35:10: error TS2304: …`
    const lines = `${run.stdout}${run.stderr}`
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const m = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line);
        const block = m ? byFile.get(relative(OUT, join(ROOT, m[1] ?? ''))) : undefined;
        if (!m || !block) return line;
        const inBlock = Number(m[2]) - block.preludeLines;
        const where =
          inBlock >= 1 ? `${block.fenceLine + inBlock}:${m[3]}` : `${block.fenceLine} (declare comment)`;
        return `${block.readme}:${where}: ${m[4]}`;
      });
    // Errors inside the packages' own sources are `npm run typecheck`'s to report, not this test's.
    const errors = lines.filter((line) => /^[^(\s]+README\.md:/.test(line));
    const elsewhere = lines.filter((line) => !errors.includes(line));
    if (elsewhere.length > 0)
      console.warn(`readme-code: tsc errors outside README blocks:\n${elsewhere.join('\n')}`);
    expect(errors, 'tsc errors in README blocks').toEqual([]);
  }, 240_000);
});
