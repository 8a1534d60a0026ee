/**
 * No import cycle among the packages' sources, type-only imports included: what
 * `npx madge --circular --extensions ts packages/*\/src` reports, run the same way here so it stays true.
 * A planted cycle is found first, so a pass below means something.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MADGE = join(ROOT, 'node_modules/madge/bin/cli.js');

/** The cycles madge finds under `dirs`, each as the list of files it goes through. */
function cyclesIn(dirs: string[]): string[][] {
  const run = spawnSync(process.execPath, [MADGE, '--circular', '--json', '--extensions', 'ts', ...dirs], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  // madge exits 1 when it finds a cycle; anything else without JSON is a failure of the tool itself.
  if (run.stdout.trim() === '') throw new Error(`madge failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as string[][];
}

describe('import cycles', () => {
  const planted = mkdtempSync(join(tmpdir(), 'pb-cycle-'));
  afterAll(() => rmSync(planted, { recursive: true, force: true }));

  it('are found by the check, a type-only import included', () => {
    writeFileSync(join(planted, 'a.ts'), "import type { B } from './b.ts';\nexport type A = { b?: B };\n");
    writeFileSync(join(planted, 'b.ts'), "import type { A } from './a.ts';\nexport type B = { a?: A };\n");
    expect(cyclesIn([planted])).toEqual([['a.ts', 'b.ts']]);
  });

  it('none among the sources of any package', () => {
    const sources = readdirSync(join(ROOT, 'packages')).map((name) => join('packages', name, 'src'));
    expect(cyclesIn(sources)).toEqual([]);
  }, 120_000);
});
