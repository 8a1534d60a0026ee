/**
 * Every published package, packed as `npm publish` would pack it (`npm pack --dry-run --json`): the
 * tarball holds its LICENSE, README and every file its package.json points to, and none of the
 * repository's tests, generators or scripts; its metadata names the repository. The checker itself is
 * tested first on planted problems, so a pass below means something.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkPackageMetadata,
  checkPackContents,
  manifestTargets,
  type PackageManifest,
} from './helpers/pack-check.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REPOSITORY = 'https://github.com/postback-dev/postback';

describe('the tarball checker', () => {
  const pkg: PackageManifest = {
    name: '@postback/fake',
    main: './dist/index.js',
    types: './dist/index.d.ts',
    bin: { fake: './bin/fake.js' },
    exports: {
      '.': { '@postback/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
      './testing': { types: './dist/testing/index.d.ts', default: './dist/testing/index.js' },
      './tables/*': './dist/tables/*.js',
      './package.json': './package.json',
    },
    imports: { '#transport': { node: './dist/transport/node.js', default: 'undici' } },
  };
  const good = [
    'package.json',
    'LICENSE',
    'README.md',
    'bin/fake.js',
    'src/index.ts',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/testing/index.js',
    'dist/testing/index.d.ts',
    'dist/tables/money.js',
    'dist/transport/node.js',
  ];

  it('collects every target of main, types, bin, exports and imports (not bare package names)', () => {
    expect(manifestTargets(pkg).sort()).toEqual(
      [
        'bin/fake.js',
        'dist/index.d.ts',
        'dist/index.js',
        'dist/tables/*.js',
        'dist/testing/index.d.ts',
        'dist/testing/index.js',
        'dist/transport/node.js',
        'package.json',
        'src/index.ts',
      ].sort(),
    );
  });

  it('passes a complete tarball', () => {
    expect(checkPackContents(pkg, good)).toEqual([]);
  });

  it('finds a missing export target', () => {
    expect(
      checkPackContents(
        pkg,
        good.filter((f) => f !== 'dist/testing/index.d.ts'),
      ),
    ).toEqual([
      '@postback/fake: main/types/bin/exports/imports target dist/testing/index.d.ts is not in the tarball',
    ]);
  });

  it('finds a missing bin, a subpath pattern that matches nothing and a missing imports target', () => {
    const files = good.filter(
      (f) => !['bin/fake.js', 'dist/tables/money.js', 'dist/transport/node.js'].includes(f),
    );
    expect(checkPackContents(pkg, files)).toEqual([
      '@postback/fake: main/types/bin/exports/imports target bin/fake.js is not in the tarball',
      '@postback/fake: main/types/bin/exports/imports target dist/tables/*.js is not in the tarball',
      '@postback/fake: main/types/bin/exports/imports target dist/transport/node.js is not in the tarball',
    ]);
  });

  it('finds a missing LICENSE or README', () => {
    expect(
      checkPackContents(
        pkg,
        good.filter((f) => f !== 'LICENSE' && f !== 'README.md'),
      ),
    ).toEqual(['@postback/fake: LICENSE is missing', '@postback/fake: README.md is missing']);
  });

  it('finds WebAssembly text, tests, harnesses, fixtures, generators and scripts', () => {
    const planted = [
      'src/writer.wat',
      'src/outbox.test.ts',
      'dist/outbox.test.js',
      'dist/outbox.property.test.d.ts',
      'src/queue/dispatcher-harness.ts',
      'test/fixtures/jobs.ndjson',
      'src/gen-tables.ts',
      'scripts/build-wasm.ts',
      'dist/tsconfig.build.tsbuildinfo',
    ];
    const problems = checkPackContents(pkg, [...good, ...planted]);
    expect(problems).toHaveLength(planted.length);
    for (const file of planted) expect(problems.join('\n')).toContain(`${file} is `);
    // A `testing` export (conformance suites for users) is not a test file.
    expect(checkPackContents(pkg, [...good, 'src/testing/index.ts'])).toEqual([]);
  });

  it('checks license, repository (with directory), homepage and bugs', () => {
    const meta: PackageManifest = {
      name: '@postback/fake',
      license: 'MIT',
      repository: { type: 'git', url: `git+${REPOSITORY}.git`, directory: 'packages/fake' },
      homepage: `${REPOSITORY}/tree/main/packages/fake#readme`,
      bugs: { url: `${REPOSITORY}/issues` },
    };
    expect(checkPackageMetadata(meta, 'packages/fake', REPOSITORY)).toEqual([]);
    expect(
      checkPackageMetadata(
        { ...meta, repository: { url: `git+${REPOSITORY}.git` } },
        'packages/fake',
        REPOSITORY,
      ),
    ).toEqual(['@postback/fake: repository.directory is undefined, not packages/fake']);
    expect(checkPackageMetadata({ name: '@postback/fake' }, 'packages/fake', REPOSITORY)).toHaveLength(5);
  });
});

/** The published workspaces: every non-private package under packages/. */
const published = readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, 'packages', entry.name, 'package.json')))
  .map((entry) => {
    const dir = join(ROOT, 'packages', entry.name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageManifest;
    return { directory: `packages/${entry.name}`, dir, manifest };
  })
  .filter(({ manifest }) => manifest.private !== true);

describe('every published package', () => {
  const packed = new Map<string, string[]>();
  let buildLog = '';

  beforeAll(() => {
    // dist/ comes from `npm run build` (the root `prepare` runs it on `npm ci`); build if any is missing.
    const unbuilt = published.filter(({ dir, manifest }) =>
      manifestTargets(manifest).some((target) => !target.includes('*') && !existsSync(join(dir, target))),
    );
    if (unbuilt.length > 0) {
      // Only those (and what they depend on): one package that does not compile fails its own check.
      const filters = unbuilt.map(({ manifest }) => `--filter=${manifest.name}`);
      const turbo = join(ROOT, 'node_modules', '.bin', 'turbo');
      const build = spawnSync(turbo, ['run', 'build', '--output-logs=errors-only', ...filters], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      if (build.status !== 0) buildLog = `turbo run build failed:\n${build.stdout}${build.stderr}`;
    }
    const workspaces = published.flatMap(({ manifest }) => ['-w', manifest.name]);
    const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', ...workspaces], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
    for (const tarball of JSON.parse(pack.stdout) as Array<{
      name: string;
      files: Array<{ path: string }>;
    }>) {
      packed.set(
        tarball.name,
        tarball.files.map((file) => file.path),
      );
    }
  }, 600_000);

  it('there are published packages, and npm packed each of them', () => {
    expect(published.length).toBeGreaterThanOrEqual(10);
    expect([...packed.keys()].sort()).toEqual(published.map(({ manifest }) => manifest.name).sort());
  });

  it.each(published.map((p) => [p.manifest.name, p] as const))(
    '%s: its tarball holds what it must, nothing else',
    (_, p) => {
      const problems = checkPackContents(p.manifest, packed.get(p.manifest.name) ?? []);
      expect(problems, problems.length > 0 ? buildLog : undefined).toEqual([]);
    },
  );

  it('@postback/sandbox ships its test entries, ./testing and ./shop-testing, built with their types', () => {
    const files = packed.get('@postback/sandbox') ?? [];
    for (const entry of ['testing', 'shop-testing']) {
      expect(files).toContain(`dist/${entry}/index.js`);
      expect(files).toContain(`dist/${entry}/index.d.ts`);
    }
  });

  it.each(published.map((p) => [p.manifest.name, p] as const))(
    '%s: MIT, repository, homepage, bugs',
    (_, p) => {
      expect(checkPackageMetadata(p.manifest, p.directory, REPOSITORY)).toEqual([]);
    },
  );
});
