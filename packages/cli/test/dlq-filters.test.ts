/**
 * `postback dlq replay|purge` with filters (`--reason`, `--status`, `--older-than`), `--dry-run`, and the
 * confirmation `purge` asks for, over real SQLite files.
 */
import type { Outbox } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { createDlqCommand } from '../src/commands/dlq.ts';
import { defaultContext } from '../src/context.ts';
import type { Prompt } from '../src/prompt.ts';
import { captureIo } from './capture-io.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

const HOUR = 3_600_000;

/** Dead confirmations, each with its reason, last HTTP status and time of death. */
async function seed(
  outbox: Outbox,
  jobs: Array<{ orderId: string; reason: string; status: number; deadAt: number; clickedAt?: number }>,
) {
  const ids: Record<string, string> = {};
  for (const [i, job] of jobs.entries()) {
    await outbox.confirm({
      orderId: job.orderId,
      valueMicros: 1_000_000,
      click: { token: token(i), clickedAt: job.clickedAt ?? Date.now() },
    });
  }
  const claimed = await outbox.claim({ now: Date.now(), limit: jobs.length, leaseMs: 60_000 });
  for (const claim of claimed) {
    const job = jobs.find((j) => j.orderId === claim.orderId);
    if (job === undefined) continue;
    ids[job.orderId] = claim.id;
    await outbox.fail(claim, {
      now: job.deadAt,
      state: 'dead',
      reason: job.reason,
      attempt: {
        startedAt: job.deadAt,
        durationMs: 5,
        outcome: 'permanent',
        status: job.status,
        detail: job.reason,
      },
    });
  }
  return ids;
}

async function standardSeed() {
  const outbox = db.open();
  const now = Date.now();
  const ids = await seed(outbox, [
    {
      orderId: 'old-422',
      reason: 'Ad service answered 422: click too old',
      status: 422,
      deadAt: now - 3 * 24 * HOUR,
    },
    { orderId: 'new-422', reason: 'Ad service answered 422: click too old', status: 422, deadAt: now - HOUR },
    {
      orderId: 'old-400',
      reason: 'Ad service answered 400: bad value',
      status: 400,
      deadAt: now - 3 * 24 * HOUR,
    },
  ]);
  await outbox.close();
  return ids;
}

async function states() {
  const outbox = db.open();
  try {
    const jobs = await outbox.listJobs({});
    return Object.fromEntries(jobs.map((j) => [j.orderId, j.state]));
  } finally {
    await outbox.close();
  }
}

describe('postback dlq replay and purge with filters', () => {
  it('replays only the dead jobs matching --reason, --status and --older-than together', async () => {
    await standardSeed();
    const { code, out } = await run([
      'dlq',
      'replay',
      '--db',
      db.file,
      '--reason',
      'answered 42\\d',
      '--status',
      '422',
      '--older-than',
      '2d',
      '--json',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ replayed: 1, expired: 0, cancelled: 0 });
    expect(await states()).toEqual({ 'old-422': 'pending', 'new-422': 'dead', 'old-400': 'dead' });
  });

  it('a dry run lists what replay would do, expired jobs with their deadline, and changes nothing', async () => {
    const outbox = db.open();
    const now = Date.now();
    await seed(outbox, [
      { orderId: 'fresh', reason: 'gone', status: 404, deadAt: now - HOUR },
      // Clicked 6 days 23.5 hours ago: past its deadline (7 days minus 1 hour).
      {
        orderId: 'late',
        reason: 'gone',
        status: 404,
        deadAt: now - HOUR,
        clickedAt: now - 7 * 24 * HOUR + 1_800_000,
      },
    ]);
    await outbox.close();
    const before = await states();
    const json = await run(['dlq', 'replay', '--db', db.file, '--all', '--dry-run', '--json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.out);
    expect(report).toMatchObject({ dryRun: true, replayed: 1, expired: 1, cancelled: 0 });
    expect(report.replayedJobs.map((j: { orderId: string }) => j.orderId)).toEqual(['fresh']);
    expect(report.expiredJobs[0]).toMatchObject({ orderId: 'late', state: 'dead' });
    expect(Date.parse(report.expiredJobs[0].deadline)).toBeLessThan(now);
    const textRun = await run(['dlq', 'replay', '--db', db.file, '--reason', 'gone', '--dry-run']);
    expect(textRun.out).toMatch(/^dry run: nothing was changed\nwould replay 1 job\(s\):\n/);
    expect(textRun.out).toMatch(
      /past their deadline would expire.*\n +\S+ +confirm +order late +deadline \d{4}-/,
    );
    expect(await states()).toEqual(before);
  });

  it('a purge dry run lists the jobs and deletes nothing, without asking', async () => {
    await standardSeed();
    const { code, out } = await run([
      'dlq',
      'purge',
      '--db',
      db.file,
      '--status',
      '400',
      '--dry-run',
      '--json',
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(out);
    expect(report).toMatchObject({ dryRun: true, purged: 1 });
    expect(report.purgedJobs[0]).toMatchObject({ orderId: 'old-400' });
    expect(Object.keys(await states())).toHaveLength(3);
  });

  it('refuses to purge without --yes when stdin is not a terminal (exit 2), deleting nothing', async () => {
    await standardSeed();
    const { code, err } = await run(['dlq', 'purge', '--db', db.file, '--all']);
    expect(code).toBe(2);
    expect(err).toMatch(/give --yes to confirm/);
    expect(Object.keys(await states())).toHaveLength(3);
    const yes = await run(['dlq', 'purge', '--db', db.file, '--older-than', '2d', '--yes']);
    expect(yes).toMatchObject({ code: 0, out: 'purged 2 dead job(s)\n' });
    expect(await states()).toEqual({ 'new-422': 'dead' });
  });

  it('asks y/N on a terminal: a no purges nothing (exit 1), a yes purges', async () => {
    await standardSeed();
    const asked: string[] = [];
    const terminal = (answer: string): Prompt => ({
      interactive: () => true,
      ask: async (question) => {
        asked.push(question);
        return answer;
      },
    });
    const no = captureIo();
    expect(
      await createDlqCommand(defaultContext, terminal('')).run(
        ['purge', '--db', db.file, '--reason', '400'],
        no,
      ),
    ).toBe(1);
    expect(asked[0]).toMatch(/^purge 1 dead job\(s\) from sqlite .* for good\? \[y\/N\] $/);
    expect(no.err()).toMatch(/nothing purged/);
    expect(Object.keys(await states())).toHaveLength(3);
    const yes = captureIo();
    expect(
      await createDlqCommand(defaultContext, terminal('y')).run(
        ['purge', '--db', db.file, '--reason', '400'],
        yes,
      ),
    ).toBe(0);
    expect(yes.out()).toBe('purged 1 dead job(s)\n');
    expect(Object.keys(await states())).toEqual(expect.not.arrayContaining(['old-400']));
  });

  it('refuses a bad --reason, --status or --older-than, and filters with --id', async () => {
    for (const args of [
      ['--reason', '('],
      ['--status', '99'],
      ['--older-than', '3'],
      ['--id', 'x', '--reason', 'y'],
    ]) {
      const { code, err } = await run(['dlq', 'replay', '--db', db.file, ...args]);
      expect(code, err).toBe(2);
    }
  });
});
