/**
 * Which Node.js the suites run on. The packages claim one minimum (root `engines`, >=22.13, where
 * `node:sqlite` needs no flag); `npm test` runs everything on the pinned Node 24, and
 * `npm run test:node22` runs the unit and adapter suites again on Node 22 (tools/node22).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { atLeast, enginesMinimum } from '../scripts/preflight-plan.ts';

const root = new URL('../', import.meta.url);
const readJson = (path: string) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));
const rootPackage = readJson('package.json');
const minimum = enginesMinimum(rootPackage.engines.node);
const major = Number(process.versions.node.split('.')[0]);

describe('runtime', () => {
  it('runs on a Node.js the packages claim to support (the root engines minimum)', () => {
    expect(minimum).toBe('22.13');
    expect(atLeast(process.versions.node, minimum)).toBe(true);
  });

  it('states one engines minimum in every package.json of the workspace', () => {
    const manifests = readJson('package-lock.json').packages as Record<
      string,
      { engines?: { node?: string } }
    >;
    const workspaces = Object.keys(manifests).filter((path) => path !== '' && !path.includes('node_modules'));
    expect(workspaces.length).toBeGreaterThan(10);
    for (const path of workspaces) {
      const engines = readJson(`${path}/package.json`).engines;
      if (engines?.node !== undefined)
        expect({ path, node: engines.node }).toEqual({ path, node: '>=22.13' });
    }
  });

  it.runIf(process.env.npm_lifecycle_event === 'test')(
    'runs `npm test` on the pinned Node 24, not the machine Node',
    () => {
      expect(major).toBeGreaterThanOrEqual(24);
    },
  );

  it.runIf(process.env.npm_lifecycle_event === 'test:node22')('runs `npm run test:node22` on Node 22', () => {
    expect(major).toBe(22);
  });
});
