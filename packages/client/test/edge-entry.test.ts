/**
 * `@postback/core` runs on edge runtimes and imports this package, so the main entry must not pull in
 * undici or any `node:` module unless the `node` condition picked the undici transport. These tests walk
 * the real import graph that a non-Node runtime resolves, and run its transport against a real server.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';
import { describe, expect, it } from 'vitest';
import { createDefaultTransport } from '../src/transport/web.ts';
import { sendJson, startServer } from './helpers/server.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  imports: Record<string, Record<string, Record<string, string> | string>>;
};

/** Resolves `#transport` the way a runtime without the `node` condition does (source condition on). */
function edgeTarget(specifier: string): string {
  const entry = pkg.imports[specifier]?.['@postback/source'];
  if (entry === undefined || typeof entry === 'string') throw new Error(`no source entry for ${specifier}`);
  const target = entry.default;
  if (target === undefined) throw new Error(`no default target for ${specifier}`);
  return resolve(root, target);
}

/** Every module specifier reached from `file`, following relative and `#` imports (type-only imports skipped). */
function graph(file: string, seen = new Map<string, string[]>()): Map<string, string[]> {
  if (seen.has(file)) return seen;
  const source = readFileSync(file, 'utf8');
  const specifiers = [
    ...source.matchAll(/^(?:import|export)\s+(?!type\s)[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/gm),
  ].map((m) => m[1] ?? m[2] ?? '');
  seen.set(file, specifiers);
  for (const spec of specifiers) {
    if (spec.startsWith('.')) graph(resolve(dirname(file), spec), seen);
    else if (spec.startsWith('#')) graph(edgeTarget(spec), seen);
  }
  return seen;
}

describe('the entry an edge runtime loads', () => {
  it('imports nothing but zod: no undici, no node: modules', () => {
    const modules = graph(resolve(root, 'src/index.ts'));
    const external = new Set(
      [...modules.values()].flat().filter((s) => !s.startsWith('.') && !s.startsWith('#')),
    );
    expect([...external]).toEqual(['zod']);
    expect([...modules.keys()].some((f) => f.endsWith('transport/undici.ts'))).toBe(false);
  });

  it('the Node condition does reach the undici transport (so the check above is not vacuous)', () => {
    const source = pkg.imports['#transport']?.['@postback/source'] as Record<string, string> | undefined;
    const nodeTarget = source?.node;
    expect(nodeTarget).toBe('./src/transport/node.ts');
    const modules = graph(resolve(root, 'src/transport/node.ts'));
    expect([...modules.values()].flat()).toContain('undici');
  });

  it('errors.ts reaches only its own dependency-free modules, so @postback/client/errors is safe anywhere', () => {
    const modules = graph(resolve(root, 'src/errors.ts'));
    expect([...modules.keys()].map((file) => file.slice(root.length + 1)).sort()).toEqual([
      'src/errors.ts',
      'src/redact.ts',
      'src/retry-after.ts',
    ]);
    expect([...modules.values()].flat().filter((spec) => !spec.startsWith('./'))).toEqual([]);
  });

  it('bundled for a worker runtime the entry holds no undici and no node: import; bundled for Node it does', async () => {
    const bundleFor = async (platform: 'browser' | 'node', conditionNames: string[]) => {
      const bundle = await rolldown({
        input: resolve(root, 'src/index.ts'),
        platform,
        resolve: { conditionNames: ['@postback/source', ...conditionNames] },
        logLevel: 'silent',
      });
      try {
        const { output } = await bundle.generate({ format: 'esm' });
        return output.map((chunk) => ('code' in chunk ? chunk.code : '')).join('\n');
      } finally {
        await bundle.close();
      }
    };
    const worker = await bundleFor('browser', ['worker', 'browser', 'import', 'default']);
    expect(worker).toContain('createClient');
    expect(worker).not.toMatch(/UND_ERR|from ["']node:|require\(["']node:/);
    const node = await bundleFor('node', ['node', 'import', 'default']);
    expect(node).toMatch(/UND_ERR/);
  }, 60_000);

  it('the edge default transport sends with the global fetch', async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, { ok: true }));
    const transport = createDefaultTransport({ connections: 1 });
    try {
      expect(transport.name).toBe('fetch');
      const res = await transport.send({
        method: 'GET',
        url: new URL(`${server.url}/v1/me`),
        headers: { accept: 'application/json' },
        body: undefined,
        signal: new AbortController().signal,
        maxBodyBytes: 1_048_576,
      });
      expect(res).toEqual({ status: 200, retryAfter: null, body: '{"ok":true}', oversized: false });
    } finally {
      await transport.close();
      await server.close();
    }
  });
});
