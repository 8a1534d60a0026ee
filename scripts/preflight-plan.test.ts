import { describe, expect, it } from 'vitest';
import {
  atLeast,
  chromiumInstallCommand,
  enginesMinimum,
  type PgFacts,
  pgTarget,
  planChromium,
  planNode,
  planPostgres,
  planPromtool,
  promtoolInstallCommand,
} from './preflight-plan.ts';

describe('planNode', () => {
  it('passes Node 24 and stops Node 20 naming the binary and the fix', () => {
    expect(planNode('24.21.0', 24, '/x/node')).toEqual({ kind: 'ok', note: 'Node 24.21.0' });
    const step = planNode('20.20.2', 24, '/usr/bin/node');
    expect(step.kind).toBe('fail');
    expect(step.kind === 'fail' && step.message).toContain('Node >= 24, got 20.20.2 (/usr/bin/node)');
    expect(step.kind === 'fail' && step.message).toContain('npm ci');
  });
});

describe('atLeast and enginesMinimum', () => {
  it('compares versions part by part against the engines minimum', () => {
    expect(enginesMinimum('>=22.13')).toBe('22.13');
    expect(() => enginesMinimum('^22')).toThrow('engines.node must be ">=X.Y"');
    expect(atLeast('v22.13.0', '22.13')).toBe(true);
    expect(atLeast('22.23.3', '22.13')).toBe(true);
    expect(atLeast('24.0.0', '22.13')).toBe(true);
    expect(atLeast('22.12.9', '22.13')).toBe(false);
    expect(atLeast('20.20.2', '22.13')).toBe(false);
  });
});

describe('planChromium', () => {
  const base = { override: undefined, present: false, isRoot: true, hasApt: true };

  it('does nothing when the binary is there (no apt call)', () => {
    expect(planChromium({ ...base, present: true })).toEqual({
      kind: 'ok',
      note: 'Chromium at /usr/bin/chromium',
    });
    expect(planChromium({ ...base, override: '/opt/c', present: true, isRoot: false })).toEqual({
      kind: 'ok',
      note: 'Chromium at /opt/c',
    });
  });

  it('installs Debian’s package through scripts/install-chromium.sh when missing and root', () => {
    expect(planChromium(base)).toMatchObject({
      kind: 'run',
      command: 'bash',
      args: ['scripts/install-chromium.sh'],
    });
  });

  it('stops with the exact sudo command when missing and not root', () => {
    const step = planChromium({ ...base, isRoot: false });
    expect(step.kind).toBe('fail');
    expect(step.kind === 'fail' && step.message).toContain(
      'sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium',
    );
  });

  it('never installs over a CHROMIUM_PATH that points nowhere', () => {
    const step = planChromium({ ...base, override: '/opt/nope' });
    expect(step.kind).toBe('fail');
    expect(step.kind === 'fail' && step.message).toContain(
      'CHROMIUM_PATH=/opt/nope is not an executable file',
    );
  });

  it('asks for CHROMIUM_PATH off Debian', () => {
    const step = planChromium({ ...base, hasApt: false });
    expect(step.kind === 'fail' && step.message).toContain('CHROMIUM_PATH=/path/to/chromium npm test');
  });

  it('spells the install command with sudo only when needed', () => {
    expect(chromiumInstallCommand(true)).toBe(
      'apt-get update && apt-get install -y --no-install-recommends chromium',
    );
  });
});

describe('planPromtool', () => {
  const base = { present: false, isRoot: true, hasApt: true };

  it('does nothing when promtool is on PATH (no apt call)', () => {
    expect(planPromtool({ ...base, present: true })).toEqual({ kind: 'ok', note: 'promtool on PATH' });
    expect(planPromtool({ present: true, isRoot: false, hasApt: false })).toMatchObject({ kind: 'ok' });
  });

  it('installs Debian’s prometheus package through scripts/install-promtool.sh when missing and root', () => {
    expect(planPromtool(base)).toMatchObject({
      kind: 'run',
      command: 'bash',
      args: ['scripts/install-promtool.sh'],
    });
  });

  it('stops with the exact sudo command when missing and not root', () => {
    const step = planPromtool({ ...base, isRoot: false });
    expect(step.kind).toBe('fail');
    expect(step.kind === 'fail' && step.message).toContain(
      'sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus',
    );
  });

  it('points to a Prometheus release off Debian', () => {
    const step = planPromtool({ ...base, hasApt: false });
    expect(step.kind === 'fail' && step.message).toContain('https://prometheus.io/download/');
  });

  it('spells the install command with sudo only when needed', () => {
    expect(promtoolInstallCommand(true)).toBe(
      'apt-get update && apt-get install -y --no-install-recommends prometheus',
    );
  });
});

describe('pgTarget', () => {
  it('defaults to the local test database and follows POSTBACK_TEST_PG_URL', () => {
    expect(pgTarget({})).toEqual({
      url: 'postgres://postgres@127.0.0.1:5432/test',
      host: '127.0.0.1',
      port: 5432,
      database: 'test',
      overridden: false,
      local: true,
    });
    expect(pgTarget({ POSTBACK_TEST_PG_URL: 'postgres://u:p@db.internal:6543/ci' })).toMatchObject({
      host: 'db.internal',
      port: 6543,
      database: 'ci',
      overridden: true,
      local: false,
    });
    expect(pgTarget({ POSTBACK_TEST_PG_URL: 'postgres://postgres@localhost/test' })).toMatchObject({
      port: 5432,
      local: true,
    });
  });
});

describe('planPostgres', () => {
  const base: PgFacts = {
    target: pgTarget({}),
    up: false,
    isRoot: true,
    clusters: ['15'],
    hasPgCtlcluster: true,
  };

  it('does nothing when the server answers', () => {
    expect(planPostgres({ ...base, up: true })).toEqual({
      kind: 'ok',
      note: 'PostgreSQL at 127.0.0.1:5432 (database test)',
    });
  });

  it('starts the first Debian cluster when down and root', () => {
    expect(planPostgres({ ...base, clusters: ['15', '16'] })).toMatchObject({
      kind: 'run',
      command: 'pg_ctlcluster',
      args: ['--skip-systemctl-redirect', '15', 'main', 'start'],
    });
  });

  it('stops with the exact command when down and not root', () => {
    const step = planPostgres({ ...base, isRoot: false });
    expect(step.kind === 'fail' && step.message).toContain(
      'sudo pg_ctlcluster --skip-systemctl-redirect 15 main start',
    );
  });

  it('says how to install PostgreSQL when no cluster exists', () => {
    const step = planPostgres({ ...base, clusters: [] });
    expect(step.kind === 'fail' && step.message).toContain(
      'apt-get install -y --no-install-recommends postgresql',
    );
    expect(step.kind === 'fail' && step.message).toContain('createdb test');
  });

  it('never starts a local cluster for a remote POSTBACK_TEST_PG_URL', () => {
    const step = planPostgres({
      ...base,
      target: pgTarget({ POSTBACK_TEST_PG_URL: 'postgres://db:5432/t' }),
    });
    expect(step.kind === 'fail' && step.message).toContain(
      'PostgreSQL at db:5432 (POSTBACK_TEST_PG_URL) does not answer',
    );
  });
});
