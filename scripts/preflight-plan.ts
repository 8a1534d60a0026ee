/**
 * The decisions of `scripts/preflight.ts`, kept free of I/O so they can be unit-tested: given what the
 * machine has (a Chromium binary, promtool, a reachable PostgreSQL, root, apt-get, a PostgreSQL cluster), what
 * should `npm test` do before the suites run — nothing, install or start something, or stop at once
 * with the exact command that fixes the machine.
 */

/** Where the browser suites look for Chromium unless `CHROMIUM_PATH` says otherwise (test/e2e/helpers/browser.ts). */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/** The database the PostgreSQL suites use unless `POSTBACK_TEST_PG_URL` says otherwise (packages/postgres/test/pg-test-db.ts). */
export const DEFAULT_TEST_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** What the preflight does about one prerequisite. */
export type Step =
  | { kind: 'ok'; note: string }
  | { kind: 'run'; why: string; command: string; args: string[] }
  | { kind: 'fail'; message: string };

/** The Node.js a set of scripts must run on: the major the repository's scripts pin. */
export function planNode(version: string, requiredMajor: number, execPath: string): Step {
  const major = Number(version.split('.')[0]);
  if (major >= requiredMajor) return { kind: 'ok', note: `Node ${version}` };
  return {
    kind: 'fail',
    message:
      `npm scripts must run on Node >= ${requiredMajor}, got ${version} (${execPath}). ` +
      'Run `npm ci` at the repository root so node_modules/.bin/node (the pinned Node 24) is installed, ' +
      'and start the tests with `npm test`.',
  };
}

/** True when `version` (e.g. `22.13.1`, `v24.0.0`) is at least `minimum` (e.g. `22.13`, compared part by part). */
export function atLeast(version: string, minimum: string): boolean {
  const parse = (v: string) => v.replace(/^v/, '').split('.').map(Number);
  const have = parse(version);
  const want = parse(minimum);
  for (let i = 0; i < want.length; i++) {
    const h = have[i] ?? 0;
    const w = want[i] ?? 0;
    if (h !== w) return h > w;
  }
  return true;
}

/** The lowest Node.js an `engines.node` range of the form `>=X.Y[.Z]` allows. */
export function enginesMinimum(range: string): string {
  const match = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(range.trim());
  if (!match?.[1]) throw new Error(`engines.node must be ">=X.Y", got "${range}"`);
  return match[1];
}

/** What the machine has that matters for Chromium. */
export interface ChromiumFacts {
  /** `CHROMIUM_PATH` when set (non-empty). */
  override: string | undefined;
  /** Whether the path the tests will launch is an executable file. */
  present: boolean;
  isRoot: boolean;
  /** Whether Debian's apt-get is there. */
  hasApt: boolean;
}

/** The command that installs Debian's Chromium, as a person types it (with sudo when not root). */
export function chromiumInstallCommand(isRoot: boolean): string {
  const sudo = isRoot ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends chromium`;
}

/** Chromium for the browser suites: present, installable here (root + apt), or a stop with the command. */
export function planChromium(facts: ChromiumFacts): Step {
  const path = facts.override ?? DEFAULT_CHROMIUM_PATH;
  if (facts.present) return { kind: 'ok', note: `Chromium at ${path}` };
  if (facts.override !== undefined) {
    return {
      kind: 'fail',
      message:
        `CHROMIUM_PATH=${facts.override} is not an executable file. Point it at a Chromium binary, ` +
        `or unset it to use Debian's (${DEFAULT_CHROMIUM_PATH}).`,
    };
  }
  if (facts.hasApt && facts.isRoot) {
    return {
      kind: 'run',
      why: `Chromium is missing (${DEFAULT_CHROMIUM_PATH}); installing Debian's package for the browser suites`,
      command: 'bash',
      args: ['scripts/install-chromium.sh'],
    };
  }
  if (facts.hasApt) {
    return {
      kind: 'fail',
      message:
        `Chromium is missing (${DEFAULT_CHROMIUM_PATH}); the browser suites need it. Install it with:\n` +
        `  ${chromiumInstallCommand(false)}\n` +
        'or set CHROMIUM_PATH to a Chromium binary.',
    };
  }
  return {
    kind: 'fail',
    message:
      `Chromium is missing (${DEFAULT_CHROMIUM_PATH}) and this is not a Debian machine; install Chromium ` +
      'and run the tests with CHROMIUM_PATH=/path/to/chromium npm test',
  };
}

/** What the machine has that matters for promtool (Prometheus' checker, run on a worker's `/metrics`). */
export interface PromtoolFacts {
  /** Whether `promtool` is an executable on PATH. */
  present: boolean;
  isRoot: boolean;
  /** Whether Debian's apt-get is there. */
  hasApt: boolean;
}

/** The command that installs Debian's `prometheus` package (which holds promtool), as a person types it. */
export function promtoolInstallCommand(isRoot: boolean): string {
  const sudo = isRoot ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends prometheus`;
}

/** promtool for the metrics suite: present, installable here (root + apt), or a stop with the command. */
export function planPromtool(facts: PromtoolFacts): Step {
  if (facts.present) return { kind: 'ok', note: 'promtool on PATH' };
  if (facts.hasApt && facts.isRoot) {
    return {
      kind: 'run',
      why: "promtool is missing; installing Debian's prometheus package for the metrics suite",
      command: 'bash',
      args: ['scripts/install-promtool.sh'],
    };
  }
  if (facts.hasApt) {
    return {
      kind: 'fail',
      message:
        'promtool is missing; the metrics suite runs `promtool check metrics`. Install it with:\n' +
        `  ${promtoolInstallCommand(false)}`,
    };
  }
  return {
    kind: 'fail',
    message:
      'promtool is missing and this is not a Debian machine; put promtool (from a Prometheus release, ' +
      'https://prometheus.io/download/) on PATH and run `npm test` again.',
  };
}

/** Where the PostgreSQL suites connect. */
export interface PgTarget {
  url: string;
  host: string;
  port: number;
  database: string;
  /** Whether the URL came from `POSTBACK_TEST_PG_URL`. */
  overridden: boolean;
  /** Whether the server is on this machine (so starting its cluster can help). */
  local: boolean;
}

/** The test database from the environment the suites read (`POSTBACK_TEST_PG_URL`), else the default. */
export function pgTarget(env: Record<string, string | undefined>): PgTarget {
  const raw = env.POSTBACK_TEST_PG_URL || undefined;
  const url = new URL(raw ?? DEFAULT_TEST_PG_URL);
  const host = url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  return {
    url: raw ?? DEFAULT_TEST_PG_URL,
    host,
    port: url.port ? Number(url.port) : 5432,
    database: decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres',
    overridden: raw !== undefined,
    local: ['127.0.0.1', 'localhost', '::1'].includes(host),
  };
}

/** What the machine has that matters for PostgreSQL. */
export interface PgFacts {
  target: PgTarget;
  /** Whether something accepts TCP connections at the target's host and port. */
  up: boolean;
  isRoot: boolean;
  /** Debian's cluster versions (the folders of /etc/postgresql), oldest first. */
  clusters: string[];
  /** Whether Debian's pg_ctlcluster is there. */
  hasPgCtlcluster: boolean;
}

/** PostgreSQL for the adapter suites: up, startable here (root + a Debian cluster), or a stop with the command. */
export function planPostgres(facts: PgFacts): Step {
  const { target } = facts;
  const where = `${target.host}:${target.port}`;
  if (facts.up) return { kind: 'ok', note: `PostgreSQL at ${where} (database ${target.database})` };
  if (!target.local) {
    return {
      kind: 'fail',
      message:
        `PostgreSQL at ${where} (POSTBACK_TEST_PG_URL) does not answer. Start that server, or unset ` +
        'POSTBACK_TEST_PG_URL to use the local one at 127.0.0.1:5432.',
    };
  }
  const version = facts.clusters[0];
  if (!facts.hasPgCtlcluster || version === undefined) {
    return {
      kind: 'fail',
      message:
        `PostgreSQL does not answer at ${where} and no Debian cluster is installed. Install and start it with:\n` +
        '  sudo apt-get update && sudo apt-get install -y --no-install-recommends postgresql\n' +
        `then create the database the tests use (they connect as postgres, without a password): ` +
        `sudo -u postgres createdb ${target.database}`,
    };
  }
  const args = ['--skip-systemctl-redirect', version, 'main', 'start'];
  if (facts.isRoot) {
    return {
      kind: 'run',
      why: `PostgreSQL does not answer at ${where}; starting cluster ${version}/main`,
      command: 'pg_ctlcluster',
      args,
    };
  }
  return {
    kind: 'fail',
    message: `PostgreSQL does not answer at ${where}. Start it with:\n  sudo pg_ctlcluster ${args.join(' ')}`,
  };
}
