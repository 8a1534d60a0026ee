/**
 * Run first by `npm test` (and `npm run test:node22`): makes sure the machine has what the suites talk to,
 * so the README's two commands pass on a fresh clone of a fresh machine.
 *
 * - Node: the repository's scripts run on Node 24 (the `node` package pinned as a root dev dependency,
 *   which `npm run` puts first on PATH); fails loudly if the machine's older Node was picked up instead.
 * - PostgreSQL at `POSTBACK_TEST_PG_URL` (default 127.0.0.1:5432, database `test`): started with Debian's
 *   pg_ctlcluster when down and this is root, else a stop with the command to run.
 * - Chromium at `CHROMIUM_PATH` (default /usr/bin/chromium), for the browser suites: Debian's package is
 *   installed when missing and this is root, else a stop with the command. Skipped with `--no-browser`.
 * - promtool on PATH, for the metrics suite's `promtool check metrics`: Debian's `prometheus` package is
 *   installed when missing and this is root, else a stop with the command.
 * - With `--node22`: the Node 22 of `tools/node22` is installed and at least the `engines` minimum.
 *
 * Fast when everything is there: a few file checks and one TCP connect, no apt call.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import {
  atLeast,
  DEFAULT_CHROMIUM_PATH,
  enginesMinimum,
  type PgTarget,
  pgTarget,
  planChromium,
  planNode,
  planPostgres,
  planPromtool,
  type Step,
} from './preflight-plan.ts';

/** Where `npm ci` puts the Node 22 that `npm run test:node22` runs the suites on. */
export const NODE22_PATH = 'tools/node22/node_modules/node/bin/node';

const args = new Set(process.argv.slice(2));
const isRoot = process.getuid?.() === 0;
const failures: string[] = [];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether `name` is an executable in one of PATH's directories. */
function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && isExecutable(join(dir, name)));
}

function reachable(target: PgTarget, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Prints an ok step, records a failure, or runs the command of a `run` step; true when that command succeeded. */
function act(step: Step): boolean {
  if (step.kind === 'ok') {
    console.log(`preflight: ${step.note}`);
    return false;
  }
  if (step.kind === 'fail') {
    failures.push(step.message);
    return false;
  }
  console.log(`preflight: ${step.why}: ${step.command} ${step.args.join(' ')}`);
  const result = spawnSync(step.command, step.args, { stdio: 'inherit' });
  if (result.status !== 0) {
    failures.push(
      `\`${step.command} ${step.args.join(' ')}\` failed (${result.error?.message ?? `exit ${result.status}`}).`,
    );
    return false;
  }
  return true;
}

const minimum = enginesMinimum(JSON.parse(readFileSync('package.json', 'utf8')).engines.node);
act(planNode(process.versions.node, 24, process.execPath));

if (args.has('--node22')) {
  if (!isExecutable(NODE22_PATH)) {
    failures.push(
      `${NODE22_PATH} is missing: run \`npm ci\` at the repository root (it installs tools/node22).`,
    );
  } else {
    const version = execFileSync(NODE22_PATH, ['--version'], { encoding: 'utf8' }).trim();
    if (atLeast(version, minimum))
      console.log(`preflight: Node ${version} for the Node 22 run (engines >=${minimum})`);
    else
      failures.push(
        `${NODE22_PATH} is ${version}, older than the engines minimum ${minimum}: run \`npm ci\`.`,
      );
  }
}

const target = pgTarget(process.env);
const clusters = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql').sort() : [];
const pgFacts = { target, isRoot, clusters, hasPgCtlcluster: existsSync('/usr/bin/pg_ctlcluster') };
if (act(planPostgres({ ...pgFacts, up: await reachable(target) }))) {
  let up = false;
  for (let i = 0; i < 30 && !up; i++) {
    up = await reachable(target);
    if (!up) await new Promise((r) => setTimeout(r, 1000));
  }
  if (!up)
    failures.push(
      `PostgreSQL still does not answer at ${target.host}:${target.port} after 30 s; see /var/log/postgresql.`,
    );
  else console.log(`preflight: PostgreSQL at ${target.host}:${target.port} is up`);
}

if (!args.has('--no-browser')) {
  const { env } = process;
  const override = env.CHROMIUM_PATH || undefined;
  const path = override ?? DEFAULT_CHROMIUM_PATH;
  const facts = { override, isRoot, hasApt: existsSync('/usr/bin/apt-get') };
  if (act(planChromium({ ...facts, present: isExecutable(path) })) && !isExecutable(path)) {
    failures.push(`Chromium is still missing at ${path} after the install.`);
  }
}

const promtoolFacts = { isRoot, hasApt: existsSync('/usr/bin/apt-get') };
if (act(planPromtool({ ...promtoolFacts, present: onPath('promtool') })) && !onPath('promtool')) {
  failures.push('promtool is still missing from PATH after the install.');
}

if (failures.length > 0) {
  for (const message of failures) console.error(`preflight: ${message}`);
  console.error('preflight: stopped before the tests; fix the above and run `npm test` again.');
  process.exit(1);
}
