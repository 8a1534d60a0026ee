/**
 * What a published package's tarball must and must not hold, checked on the list of files `npm pack`
 * would publish: the LICENSE and README, every file its `package.json` points to (`main`, `types`,
 * `bin`, `exports`, `imports`), and none of the repository's test files, generators, scripts or
 * WebAssembly text sources. Pure functions over a file list, so they can be tested on planted problems.
 */

/** The fields of a package.json that name files, or describe where the package comes from. */
export interface PackageManifest {
  name: string;
  private?: boolean;
  license?: string;
  main?: string;
  module?: string;
  types?: string;
  typings?: string;
  bin?: string | Record<string, string>;
  exports?: unknown;
  imports?: unknown;
  repository?: { type?: string; url?: string; directory?: string } | string;
  homepage?: string;
  bugs?: { url?: string } | string;
}

/** Files that must never be published, each with why. */
const FORBIDDEN: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  { pattern: /\.wat$/, why: 'a WebAssembly text source' },
  { pattern: /(^|\/)(test|tests|__tests__|fixtures?)\//, why: 'a test directory' },
  { pattern: /\.(test|spec)\.(d\.)?[cm]?[jt]sx?(\.map)?$/, why: 'a test file' },
  { pattern: /(^|\/)[^/]*harness[^/]*$/, why: 'a test harness' },
  { pattern: /(^|\/)scripts\//, why: 'a script of the repository' },
  {
    pattern: /(^|\/)(gen|generate)[-_.][^/]*$|(^|\/)generate[^/]*\.[cm]?[jt]s$|\.generator\./,
    why: 'a generator',
  },
  { pattern: /\.tsbuildinfo$/, why: 'a TypeScript build cache' },
  { pattern: /(^|\/)tsconfig[^/]*\.json$/, why: 'a tsconfig' },
];

/** Every relative file a `package.json` field points to (`./dist/x.js` → `dist/x.js`). */
export function manifestTargets(pkg: PackageManifest): string[] {
  const targets: string[] = [];
  // `exports` and `imports` targets inside the package start with `./` (an `imports` target may also be
  // a bare package name, which is not a file of ours); `main`, `types` and `bin` may omit the `./`.
  const add = (value: unknown, relativeOnly: boolean): void => {
    if (typeof value === 'string') {
      if (!relativeOnly || value.startsWith('./')) targets.push(value);
    } else if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) add(item, relativeOnly);
    }
  };
  for (const field of [pkg.main, pkg.module, pkg.types, pkg.typings, pkg.bin]) add(field, false);
  add(pkg.exports, true);
  add(pkg.imports, true);
  return [...new Set(targets.map((target) => target.replace(/^\.\//, '')))];
}

/** A target with `*` (a subpath pattern) as a regular expression over file paths. */
function targetPattern(target: string): RegExp {
  const escaped = target
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.+');
  return new RegExp(`^${escaped}$`);
}

/**
 * The problems of a tarball's file list (paths relative to the package root, as `npm pack --json` gives
 * them); an empty array when it is fit to publish.
 *
 * @example
 * ```ts
 * checkPackContents({ name: '@postback/x', main: './dist/index.js' }, ['package.json', 'LICENSE']);
 * // ["@postback/x: README.md is missing", "@postback/x: main/types/bin/exports/imports target dist/index.js is not in the tarball"]
 * ```
 */
export function checkPackContents(pkg: PackageManifest, files: readonly string[]): string[] {
  const problems: string[] = [];
  const present = new Set(files);
  for (const required of ['package.json', 'LICENSE', 'README.md']) {
    if (!present.has(required)) problems.push(`${pkg.name}: ${required} is missing`);
  }
  for (const file of files) {
    const hit = FORBIDDEN.find(({ pattern }) => pattern.test(file));
    if (hit !== undefined) problems.push(`${pkg.name}: ${file} is ${hit.why} and must not be published`);
  }
  for (const target of manifestTargets(pkg)) {
    const found = target.includes('*')
      ? files.some((file) => targetPattern(target).test(file))
      : present.has(target);
    if (!found) {
      problems.push(`${pkg.name}: main/types/bin/exports/imports target ${target} is not in the tarball`);
    }
  }
  return problems;
}

/**
 * The problems of a published package's metadata: MIT license, and `repository` (with the package's
 * `directory`), `homepage` and `bugs` pointing at `repositoryUrl`.
 *
 * @example
 * ```ts
 * checkPackageMetadata(pkg, 'packages/core', 'https://github.com/postback-dev/postback'); // []
 * ```
 */
export function checkPackageMetadata(
  pkg: PackageManifest,
  directory: string,
  repositoryUrl: string,
): string[] {
  const problems: string[] = [];
  if (pkg.license !== 'MIT') problems.push(`${pkg.name}: license is ${String(pkg.license)}, not MIT`);
  const repo = typeof pkg.repository === 'object' ? pkg.repository : undefined;
  if (repo?.url !== `git+${repositoryUrl}.git`)
    problems.push(`${pkg.name}: repository.url is ${String(repo?.url)}, not git+${repositoryUrl}.git`);
  if (repo?.directory !== directory)
    problems.push(`${pkg.name}: repository.directory is ${String(repo?.directory)}, not ${directory}`);
  if (typeof pkg.homepage !== 'string' || !pkg.homepage.startsWith(repositoryUrl))
    problems.push(`${pkg.name}: homepage is ${String(pkg.homepage)}, not a page of ${repositoryUrl}`);
  const bugs = typeof pkg.bugs === 'object' ? pkg.bugs.url : pkg.bugs;
  if (bugs !== `${repositoryUrl}/issues`)
    problems.push(`${pkg.name}: bugs is ${String(bugs)}, not ${repositoryUrl}/issues`);
  return problems;
}
