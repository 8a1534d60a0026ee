/**
 * `postback dlq`: list, replay and purge dead jobs; replays past their deadline expire instead.
 */
import { describe, expect, it } from 'vitest';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { seedDead, token } from './db-fixture.ts';

setUpCommandHarness();

describe('postback dlq', () => {
  it('lists dead jobs with their reasons and pages with --after', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['d-1', 'd-2', 'd-3'], 'Ad service answered 422: click is older than 7 days');
    await outbox.close();
    const page1 = JSON.parse((await run(['dlq', 'list', '--db', db.file, '--limit', '2', '--json'])).out);
    expect(page1.jobs).toHaveLength(2);
    expect(page1.jobs[0].reason).toMatch(/older than 7 days/);
    expect(page1.next).toBe(page1.jobs[1].id);
    const page2 = JSON.parse(
      (await run(['dlq', 'list', '--db', db.file, '--limit', '2', '--after', page1.next, '--json'])).out,
    );
    expect(page2.jobs).toHaveLength(1);
    expect(page2.next).toBeNull();
    const seen = [...page1.jobs, ...page2.jobs].map((j: { orderId: string }) => j.orderId).sort();
    expect(seen).toEqual(['d-1', 'd-2', 'd-3']);
  });

  it('replays one dead job by id back to pending with its attempts reset', async () => {
    const outbox = db.open();
    const [job] = await seedDead(outbox, ['d-1', 'd-2'], 'gone');
    await outbox.close();
    const { code, out } = await run(['dlq', 'replay', '--db', db.file, '--id', job?.id as string, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({
      replayed: 1,
      expired: 0,
      expiredJobs: [],
      cancelled: 0,
      cancelledJobs: [],
      notDead: [],
    });
    const check = db.open();
    expect(await check.get(job?.id as string)).toMatchObject({ state: 'pending', attempts: 0 });
    expect((await check.stats(Date.now())).counts.dead).toBe(1);
    await check.close();
  });

  it('replays all with a progress bar on a terminal and a plain summary otherwise', async () => {
    const outbox = db.open();
    await seedDead(
      outbox,
      Array.from({ length: 450 }, (_, i) => `d-${i}`),
      'gone',
    );
    await outbox.close();
    const tty = await run(['dlq', 'replay', '--db', db.file, '--all'], { isTTY: true });
    expect(tty.code).toBe(0);
    expect(tty.out).toMatch(/\rreplaying \[#+-*\] 200\/450/);
    expect(tty.out).toMatch(/450\/450\n/);
    expect(tty.out).toMatch(/replayed 450 job/);

    const again = db.open();
    const claimed = await again.claim({ now: Date.now(), limit: 450, leaseMs: 60_000 });
    for (const job of claimed) await again.fail(job, { now: Date.now(), state: 'dead', reason: 'gone' });
    await again.close();
    const plain = await run(['dlq', 'replay', '--db', db.file, '--all']);
    expect(plain.out).toBe('replayed 450 job(s)\n');
  });

  it('expires instead of replaying a dead job whose deadline has passed', async () => {
    const outbox = db.open();
    // Clicked 6 days 23.5 hours ago: the deadline (7 days minus 1 hour) is already behind us.
    const [late] = await seedDead(outbox, ['late-1'], 'gone', Date.now() - 7 * 86_400_000 + 1_800_000);
    await outbox.close();
    const { code, out } = await run(['dlq', 'replay', '--db', db.file, '--all', '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      replayed: 0,
      expired: 1,
      expiredJobs: [{ id: late?.id, orderId: 'late-1', state: 'expired' }],
      notDead: [],
    });
  });

  describe('reports which jobs expired instead of being replayed', () => {
    /** Two dead jobs clicked 6 days 23.5 hours ago (deadline passed) and one clicked now. */
    async function seedMixed() {
      const outbox = db.open();
      const late = await seedDead(
        outbox,
        ['late-1', 'late-2'],
        'gone',
        Date.now() - 7 * 86_400_000 + 1_800_000,
      );
      const fresh = await seedDead(outbox, ['fresh-1'], 'gone');
      await outbox.close();
      return { late: late.map((j) => j.id).sort(), fresh: fresh.map((j) => j.id) };
    }

    it.each([['--all'], ['--id']])('as JSON, with %s', async (how) => {
      const { late, fresh } = await seedMixed();
      const select = how === '--all' ? ['--all'] : [...late, ...fresh].flatMap((id) => ['--id', id]);
      const { code, out } = await run(['dlq', 'replay', '--db', db.file, ...select, '--json']);
      expect(code).toBe(0);
      const report = JSON.parse(out);
      expect(report).toMatchObject({ replayed: 1, expired: 2, cancelled: 0, notDead: [] });
      expect(report.expiredJobs.map((j: { id: string }) => j.id).sort()).toEqual(late);
      for (const job of report.expiredJobs) {
        expect(job).toMatchObject({ state: 'expired', kind: 'confirm' });
        expect(Date.parse(job.deadline)).toBeLessThan(Date.now());
      }
      const check = db.open();
      expect(await check.get(fresh[0] as string)).toMatchObject({ state: 'pending' });
      await check.close();
    });

    it.each([['--all'], ['--id']])('as text, with %s, naming each job and its deadline', async (how) => {
      const { late, fresh } = await seedMixed();
      const select = how === '--all' ? ['--all'] : [...late, ...fresh].flatMap((id) => ['--id', id]);
      const { code, out } = await run(['dlq', 'replay', '--db', db.file, ...select]);
      expect(code).toBe(0);
      expect(out).toMatch(
        /^replayed 1 job\(s\)\n2 job\(s\) past their deadline expired instead of being replayed/,
      );
      for (const id of late)
        expect(out).toMatch(new RegExp(`^  ${id} +confirm +order late-\\d +deadline \\d{4}-`, 'm'));
      expect(out).not.toContain('fresh-1');
    });
  });

  it('exits 1 when an --id is not a dead job, still acting on the others', async () => {
    const outbox = db.open();
    const [job] = await seedDead(outbox, ['d-1'], 'gone');
    await outbox.close();
    const { code, out, err } = await run([
      'dlq',
      'purge',
      '--db',
      db.file,
      '--id',
      job?.id as string,
      '--id',
      'job_nope',
      '--yes',
    ]);
    expect(code).toBe(1);
    expect(out).toMatch(/purged 1 dead job/);
    expect(err).toMatch(/job_nope: no dead job/);
  });

  it('purges all dead jobs and leaves the others', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['d-1', 'd-2'], 'gone');
    await outbox.confirm({
      orderId: 'live',
      valueMicros: 1,
      click: { token: token(9), clickedAt: Date.now() },
    });
    await outbox.close();
    const { code, out } = await run(['dlq', 'purge', '--db', db.file, '--all', '--yes', '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({ purged: 2, notDead: [] });
    const check = db.open();
    expect((await check.stats(Date.now())).counts).toMatchObject({ dead: 0, pending: 1 });
    await check.close();
  });

  it('exits 2 when replay or purge is given neither --id nor --all', async () => {
    for (const action of ['replay', 'purge']) {
      const { code, err } = await run(['dlq', action, '--db', db.file]);
      expect(code).toBe(2);
      expect(err).toMatch(/--id ID .* or --all/);
    }
  });
});
