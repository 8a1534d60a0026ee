/**
 * What an advertiser gets from `npm install`: the packages a SQLite shop needs (express, sqlite, core,
 * client, the CLI and what they pull in) packed as `npm publish` would pack them, installed into a
 * scratch project outside the monorepo, and used there as a user would — an ESM server that captures a
 * sandbox click and queues the confirmation in its SQLite file, a CommonJS `require`, the `postback`
 * binary (with no pg and no AWS SDK installed), and a TypeScript file type-checked against the
 * published declarations. No network: the install is `npm ci --offline`, from the cache `npm ci` filled
 * (see helpers/offline-lock.ts); a package missing from the cache skips the suite, naming it.
 */
import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lockfile, type PackedPackage, scratchLock } from './helpers/offline-lock.ts';
import { manifestTargets, type PackageManifest } from './helpers/pack-check.ts';

const ROOT = join(import.meta.dirname, '..');
const SECRET = 'tarball-install-cookie-secret-0123456789';
/** The packages a SQLite shop installs, and their internal dependencies (the CLI's). */
const PACKAGES = ['core', 'client', 'sqlite', 'express', 'cli', 'dashboard', 'metrics', 'sandbox'];
/** Registry packages the scratch project depends on itself: the framework, and types for TypeScript users. */
const EXTRA = ['express', '@types/express', '@types/node'];

/** The environment of every child: Node 24 first on PATH (npm and the bins' `env node` run on it), no npm_* of the parent run. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'NODE_OPTIONS' && key !== 'INIT_CWD') env[key] = value;
  }
  env.PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  env.npm_config_update_notifier = 'false';
  env.npm_config_offline = 'true'; // npm and npx never reach the registry: only its cache
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env: childEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

const output = (r: SpawnSyncReturns<string>) => `exit ${r.status}\n${r.stdout}\n${r.stderr}`;

/** Polls `probe` until it returns a value other than undefined. */
async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  for (const started = Date.now(); Date.now() - started < timeoutMs; ) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The shop: ESM, importing the four packages by their published names. Delivers only once told to. */
const SHOP_MJS = `import { createClient } from '@postback/client';
import { createDispatcher } from '@postback/core';
import { confirmOrder, postback } from '@postback/express';
import { createSqliteOutbox } from '@postback/sqlite';
import express from 'express';

const outbox = createSqliteOutbox({ filename: process.env.SHOP_DB });
const client = createClient({ baseUrl: process.env.POSTBACK_API_URL, apiKey: process.env.POSTBACK_API_KEY });
const dispatcher = createDispatcher({ outbox, client });
let delivering = false;

const app = express();
app.use(postback({ secrets: [process.env.POSTBACK_SECRET] }));
app.get('/', async (req, res) => {
  const click = await req.postback.click();
  res.send(click ? 'Welcome, ad visitor' : 'Welcome');
});
app.post('/orders', express.json(), async (req, res) => {
  const { enqueued } = await confirmOrder(req, outbox, {
    orderId: req.body.order_id,
    valueMicros: req.body.value_micros,
  });
  res.status(201).json({ attributed: enqueued });
});
app.post('/deliver', (_req, res) => {
  delivering = true;
  dispatcher.start();
  res.status(202).end();
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log('listening on http://127.0.0.1:' + server.address().port);
});
process.once('SIGTERM', async () => {
  server.close();
  if (delivering) await dispatcher.stop({ timeoutMs: 5_000 });
  await outbox.close();
  await client.close();
});
`;

/** A TypeScript user's file: the same imports, typed (req.postback comes from the package's augmentation). */
const SHOP_TS = `import { type AdServiceClient, createClient } from '@postback/client';
import { type ClickStamp, createDispatcher } from '@postback/core';
import { confirmOrder, postback } from '@postback/express';
import { createSqliteOutbox, type SqliteOutbox } from '@postback/sqlite';
import express from 'express';

const outbox: SqliteOutbox = createSqliteOutbox({ filename: 'shop.db' });
const client: AdServiceClient = createClient({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'key' });
const app = express();
app.use(postback({ secrets: ['x'.repeat(32)] }));
app.post('/orders', async (req, res) => {
  const click: ClickStamp | null = await req.postback.click();
  const result = await confirmOrder(req, outbox, { orderId: 'ord_1', valueMicros: 1_000 });
  res.json({ enqueued: result.enqueued satisfies boolean, token: click?.token ?? null });
});
createDispatcher({ outbox, client }).start();
`;

const CHECK_CJS = `const core = require('@postback/core');
if (typeof core.createDispatcher !== 'function') throw new Error('no createDispatcher in require("@postback/core")');
console.log(JSON.stringify({ exports: Object.keys(core).length }));
`;

describe('the packed tarballs, installed in a project outside the monorepo', { timeout: 90_000 }, () => {
  let project: string;
  /** Why the suite cannot run here (a package missing from npm's cache), or undefined. */
  let skipReason: string | undefined;
  const started = Date.now();

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'postback-tarball-install-'));
    const manifests = PACKAGES.map((dir) => {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'));
      return {
        dir: join(ROOT, 'packages', dir),
        manifest: manifest as PackageManifest & PackedPackage['manifest'],
      };
    });

    // dist/ comes from the root `prepare` on `npm ci`; build what is missing (and its dependencies).
    const unbuilt = manifests.filter(({ dir, manifest }) =>
      manifestTargets(manifest).some((target) => !target.includes('*') && !existsSync(join(dir, target))),
    );
    if (unbuilt.length > 0) {
      const filters = unbuilt.map(({ manifest }) => `--filter=${manifest.name}...`);
      const build = run(
        process.execPath,
        [
          join(ROOT, 'node_modules', 'turbo', 'bin', 'turbo'),
          'run',
          'build',
          '--output-logs=errors-only',
          ...filters,
        ],
        ROOT,
      );
      if (build.status !== 0) throw new Error(`turbo run build failed:\n${output(build)}`);
    }

    const tarballs = join(project, 'tarballs');
    mkdirSync(tarballs);
    const workspaces = manifests.flatMap(({ manifest }) => ['-w', manifest.name]);
    const pack = run(
      'npm',
      ['pack', '--json', '--ignore-scripts', '--pack-destination', tarballs, ...workspaces],
      ROOT,
    );
    if (pack.status !== 0) throw new Error(`npm pack failed:\n${output(pack)}`);
    const packedInfo = new Map(
      (JSON.parse(pack.stdout) as Array<{ name: string; filename: string; integrity: string }>).map((t) => [
        t.name,
        t,
      ]),
    );
    const packed: PackedPackage[] = manifests.map(({ manifest }) => {
      const info = packedInfo.get(manifest.name);
      if (info === undefined) throw new Error(`npm pack did not pack ${manifest.name}`);
      return { manifest, file: `tarballs/${info.filename}`, integrity: info.integrity };
    });

    const monorepoLock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
    const { dependencies, lock } = scratchLock(monorepoLock, packed, EXTRA);
    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify({ name: 'postback-scratch', private: true, type: 'module', dependencies }, null, 2)}\n`,
    );
    writeFileSync(join(project, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
    writeFileSync(join(project, 'shop.mjs'), SHOP_MJS);
    writeFileSync(join(project, 'shop.ts'), SHOP_TS);
    writeFileSync(join(project, 'check.cjs'), CHECK_CJS);

    const install = run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], project);
    if (install.status !== 0) {
      const missing = /ENOTCACHED[\s\S]*?request to (\S+) failed/.exec(install.stderr)?.[1];
      if (missing === undefined) throw new Error(`npm ci --offline failed:\n${output(install)}`);
      skipReason = `not in npm's cache (run npm ci online once): ${missing}`;
    }
  }, 90_000);

  afterAll(() => {
    if (project !== undefined) rmSync(project, { recursive: true, force: true });
    console.log(`tarball-install: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it('installs no pg and no AWS SDK (the CLI names them as optional peers only)', (ctx) => {
    if (skipReason !== undefined) return ctx.skip(skipReason);
    for (const absent of ['pg', '@aws-sdk', '@postback/postgres', '@postback/sqs'])
      expect(existsSync(join(project, 'node_modules', absent)), absent).toBe(false);
    for (const present of ['@postback/express', '@postback/sqlite', 'express', '.bin/postback'])
      expect(existsSync(join(project, 'node_modules', present)), present).toBe(true);
  });

  it('an ESM shop captures a sandbox click, queues the confirmation in SQLite and delivers it', async (ctx) => {
    if (skipReason !== undefined) return ctx.skip(skipReason);
    const world: SandboxWorld = await startSandboxWorld();
    const db = join(project, 'shop.db');
    const child = spawn(process.execPath, ['shop.mjs'], {
      cwd: project,
      env: childEnv({
        SHOP_DB: db,
        POSTBACK_SECRET: SECRET,
        POSTBACK_API_URL: world.url,
        POSTBACK_API_KEY: world.conversionsKey,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await eventually('the shop to listen', async () => {
        if (child.exitCode !== null)
          throw new Error(`shop.mjs exited ${child.exitCode}:\n${stdout}\n${stderr}`);
        return /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      });

      const campaignId = await world.createCampaign(`${url}/`);
      const click = await world.click(campaignId);
      const landing = await fetch(click.landingUrl);
      expect(await landing.text()).toBe('Welcome, ad visitor');
      const cookie = landing.headers.getSetCookie()[0]?.split(';')[0] ?? '';
      expect(cookie).toMatch(/^postback_click=/);

      const orderId = `ord_tarball_${process.pid}`;
      const placed = await fetch(`${url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ order_id: orderId, value_micros: 4_200_000 }),
      });
      expect(placed.status, stderr).toBe(201);
      expect(await placed.json()).toEqual({ attributed: true });

      // The confirmation is in the SQLite file: the installed binary sees it, pending.
      const status = run(
        join(project, 'node_modules', '.bin', 'postback'),
        ['status', '--db', db, '--json'],
        project,
      );
      expect(status.status, output(status)).toBe(0);
      const report = JSON.parse(status.stdout) as { counts: Record<string, number>; total: number };
      expect(report.counts.pending).toBe(1);
      expect(report.total).toBe(1);

      expect((await fetch(`${url}/deliver`, { method: 'POST' })).status).toBe(202);
      const confirmed = await eventually('the sandbox to apply the confirmation', async () => {
        const { conversions } = await world.conversions();
        return conversions.find((c) => c.order_id === orderId);
      });
      expect(confirmed).toMatchObject({
        campaign_id: campaignId,
        value_micros: 4_200_000,
        state: 'confirmed',
      });

      child.kill('SIGTERM');
      expect(await exited, stderr).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await world.close();
    }
  });

  it('CommonJS: require("@postback/core") works', (ctx) => {
    if (skipReason !== undefined) return ctx.skip(skipReason);
    const result = run(process.execPath, ['check.cjs'], project);
    expect(result.status, output(result)).toBe(0);
    expect(JSON.parse(result.stdout).exports).toBeGreaterThan(10);
  });

  it('the postback binary runs from node_modules/.bin: --version through npx, status --json on a database', (ctx) => {
    if (skipReason !== undefined) return ctx.skip(skipReason);
    const version = run('npx', ['--no', '--', 'postback', '--version'], project);
    expect(version.status, output(version)).toBe(0);
    const cli = JSON.parse(readFileSync(join(ROOT, 'packages', 'cli', 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version.stdout.trim()).toBe(cli.version);

    // A database of its own (the shop's may be gone, or still open): created by the installed sqlite package.
    const db = join(project, 'status.db');
    const create = run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createSqliteOutbox } from '@postback/sqlite'; await createSqliteOutbox({ filename: ${JSON.stringify(db)} }).close();`,
      ],
      project,
    );
    expect(create.status, output(create)).toBe(0);
    const status = run(
      join(project, 'node_modules', '.bin', 'postback'),
      ['status', '--db', db, '--json'],
      project,
    );
    expect(status.status, output(status)).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ total: 0, counts: { pending: 0, dead: 0 } });
  });

  it('TypeScript: a file importing the packages type-checks (nodenext, strict, skipLibCheck false)', (ctx) => {
    if (skipReason !== undefined) return ctx.skip(skipReason);
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2023'];
    const result = run(
      process.execPath,
      [tsc, ...flags, '--strict', '--noEmit', '--skipLibCheck', 'false', 'shop.ts'],
      project,
    );
    expect(result.status, output(result)).toBe(0);
  });
});
