/**
 * A package-lock.json for a scratch project outside the monorepo that installs packed `@postback/*`
 * tarballs plus a few registry packages, built from the monorepo's own lock: every third-party package
 * the tarballs (and the extra packages) need, at the version and path the monorepo has installed and
 * tested. `npm ci --offline` then installs it from npm's cache by integrity alone — `npm ci` filled the
 * cache with those tarballs, but not with the registry's package documents that a plain
 * `npm install <name>` needs to resolve a range, so no network is ever needed.
 */

/** One entry of a lockfile's `packages` (lockfileVersion 3), as far as we read or write it. */
export interface LockEntry {
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dev?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  optional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

export interface Lockfile {
  name?: string;
  lockfileVersion: number;
  requires?: boolean;
  packages: Record<string, LockEntry>;
}

/** A packed workspace package: its manifest and its tarball's path relative to the scratch project. */
export interface PackedPackage {
  manifest: LockEntry & { name: string; version: string; bin?: unknown; engines?: unknown; license?: string };
  /** e.g. `tarballs/postback-core-0.1.0.tgz` */
  file: string;
  /** `sha512-…`, as `npm pack --json` reports it. */
  integrity: string;
}

/** The lock path whose node_modules a package at `path` looks in after its own: its parent package's. */
function parentPath(path: string): string {
  const at = path.lastIndexOf('/node_modules/');
  return at === -1 ? '' : path.slice(0, at);
}

/** Where Node resolves `dep` from the package at lock path `from` (its own node_modules, then upwards). */
export function resolveInLock(lock: Lockfile, from: string, dep: string): string | undefined {
  for (let path = from; ; path = parentPath(path)) {
    const candidate = path === '' ? `node_modules/${dep}` : `${path}/node_modules/${dep}`;
    if (lock.packages[candidate] !== undefined) return candidate;
    if (path === '') return undefined;
  }
}

/** The names a package needs installed: dependencies, optional ones, and peers that are not optional. */
function needs(entry: LockEntry): string[] {
  const peers = Object.keys(entry.peerDependencies ?? {}).filter(
    (name) => entry.peerDependenciesMeta?.[name]?.optional !== true,
  );
  return [
    ...Object.keys(entry.dependencies ?? {}),
    ...Object.keys(entry.optionalDependencies ?? {}),
    ...peers,
  ];
}

/**
 * The scratch project's `package.json` dependencies and its lock. `extra` are registry packages the
 * project depends on directly (e.g. `express`), at the version the monorepo's lock has hoisted. Throws
 * naming a package the monorepo's lock does not have (it cannot be installed offline, then).
 */
export function scratchLock(
  monorepo: Lockfile,
  packed: readonly PackedPackage[],
  extra: readonly string[],
  registry = 'https://registry.npmjs.org/',
): { dependencies: Record<string, string>; lock: Lockfile } {
  const byName = new Map(packed.map((p) => [p.manifest.name, p]));
  const packages: Record<string, LockEntry> = {};
  const dependencies: Record<string, string> = {};

  // Monorepo lock path → scratch path: a workspace's own node_modules moves under its installed copy.
  const workspaceDir = (name: string) => monorepo.packages[`node_modules/${name}`]?.resolved;
  const scratchPath = (path: string): string => {
    for (const p of packed) {
      const dir = workspaceDir(p.manifest.name);
      if (dir !== undefined && path.startsWith(`${dir}/node_modules/`))
        return `node_modules/${p.manifest.name}${path.slice(dir.length)}`;
    }
    return path;
  };

  const queue: Array<{ from: string; dep: string; optional: boolean }> = [];
  const visited = new Set<string>();
  const visit = (path: string, entry: LockEntry) => {
    if (visited.has(path)) return;
    visited.add(path);
    for (const dep of needs(entry))
      queue.push({ from: path, dep, optional: entry.optionalDependencies?.[dep] !== undefined });
  };

  for (const p of packed) {
    const { name, version, license, dependencies: deps, peerDependencies, peerDependenciesMeta } = p.manifest;
    const { bin, engines } = p.manifest;
    dependencies[name] = `file:${p.file}`;
    packages[`node_modules/${name}`] = {
      version,
      resolved: `file:${p.file}`,
      integrity: p.integrity,
      ...(license !== undefined && { license }),
      ...(deps !== undefined && { dependencies: deps }),
      ...(bin !== undefined && { bin }),
      ...(engines !== undefined && { engines }),
      ...(peerDependencies !== undefined && { peerDependencies }),
      ...(peerDependenciesMeta !== undefined && { peerDependenciesMeta }),
    };
    // Its dependencies resolve from the workspace directory in the monorepo's lock.
    visit(workspaceDir(name) ?? `node_modules/${name}`, p.manifest);
  }
  for (const name of extra) queue.push({ from: '', dep: name, optional: false });

  while (queue.length > 0) {
    const { from, dep, optional } = queue.shift() as (typeof queue)[number];
    if (byName.has(dep)) continue; // a packed package: installed from its tarball, at the top
    const path = resolveInLock(monorepo, from, dep);
    const entry = path === undefined ? undefined : monorepo.packages[path];
    if (path === undefined || entry === undefined) {
      if (optional) continue; // e.g. a platform-specific optional dependency the monorepo skipped
      throw new Error(
        `${dep} (needed by ${from || 'the project'}) is not in the monorepo's package-lock.json`,
      );
    }
    if (entry.link === true) {
      throw new Error(`${dep} is a workspace package of the monorepo: pack it too`);
    }
    if (from === '') dependencies[dep] = `^${entry.version}`;
    if (visited.has(path)) continue;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...kept } = entry;
    // The monorepo's lock omits `resolved` for registry packages; without it npm would fetch the
    // package's registry document to find the tarball, so it is written out (the cache is keyed by it).
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const resolved = kept.resolved ?? `${registry}${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    packages[scratchPath(path)] = { ...kept, resolved };
    visit(path, entry);
  }

  const root: LockEntry = { name: 'postback-scratch', dependencies };
  return {
    dependencies,
    lock: {
      name: 'postback-scratch',
      lockfileVersion: 3,
      requires: true,
      packages: { '': root, ...packages },
    },
  };
}
