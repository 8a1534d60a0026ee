/**
 * `postback job`: one job whole with its attempt history, or both jobs of an order, as text and JSON;
 * a job that died with a 404 and, once replayed, got a 503 shows both attempts.
 */
import type { AttemptRecord, Outbox } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { describe, expect, it } from 'vitest';
import { createJobCommand } from '../src/commands/job.ts';
import { defaultContext } from '../src/context.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

const H = 3_600_000;

/**
 * Enqueues a confirmation; sends it once (404, dead), replays it, sends it again (503, retry later). The
 * attempts are recorded as started at `t0` and `t0 + 2 s`; the transitions happen now.
 */
async function seedDiedThenRetried(outbox: Outbox, t0: number): Promise<string> {
  await outbox.confirm({
    orderId: 'A-1',
    valueMicros: 1_990_000,
    click: { token: token(1), clickedAt: t0 - H },
  });
  const [first] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
  if (first === undefined) throw new Error('nothing claimed');
  const notFound: AttemptRecord = {
    startedAt: t0,
    durationMs: 120,
    outcome: 'permanent',
    status: 404,
    detail: 'click_token not found',
  };
  await outbox.fail(first, {
    now: Date.now(),
    state: 'dead',
    reason: 'Ad service answered 404: click_token not found',
    attempt: notFound,
  });
  await outbox.replay({ ids: [first.id] }, Date.now());
  const [second] = await outbox.claim({ now: Date.now() + 1, limit: 1, leaseMs: 60_000 });
  if (second === undefined) throw new Error('nothing claimed after replay');
  await outbox.retry(second, {
    now: Date.now(),
    nextAttemptAt: t0 + 11 * 60_000,
    error: 'Ad service answered 503: try again later',
    attempt: {
      startedAt: t0 + 2_000,
      durationMs: 3_250,
      outcome: 'transient',
      status: 503,
      detail: 'try again later',
    },
  });
  return first.id;
}

describe('postback job', () => {
  it('shows a job that died with a 404 and then got a 503 after its replay, with both attempts, as JSON', async () => {
    const t0 = Date.now() - 60_000;
    const outbox = db.open();
    const id = await seedDiedThenRetried(outbox, t0);
    await outbox.close();

    const { code, out } = await run(['job', '--db', db.file, id, '--json']);
    expect(code).toBe(0);
    const job = JSON.parse(out);
    expect(job).toMatchObject({
      id,
      kind: 'confirm',
      orderId: 'A-1',
      state: 'pending',
      attempts: 1,
      campaignId: null,
      reason: 'Ad service answered 503: try again later',
      nextAttemptAt: new Date(t0 + 11 * 60_000).toISOString(),
      deadline: new Date(t0 - H + 7 * 24 * H - H).toISOString(),
      maybeAppliedAt: null,
      deliveredAt: null,
    });
    expect(job.history).toEqual([
      {
        startedAt: new Date(t0).toISOString(),
        durationMs: 120,
        outcome: 'permanent',
        status: 404,
        detail: 'click_token not found',
      },
      {
        startedAt: new Date(t0 + 2_000).toISOString(),
        durationMs: 3_250,
        outcome: 'transient',
        status: 503,
        detail: 'try again later',
      },
    ]);
  });

  it('shows the same job as text: every field, ISO times with the time left, and one line per attempt', async () => {
    const t0 = Date.now() - 60_000;
    const outbox = db.open();
    const id = await seedDiedThenRetried(outbox, t0);
    await outbox.close();

    const { code, out } = await run(['job', '--db', db.file, id]);
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`^job ${id}\\n`));
    expect(out).toMatch(/ {2}state {10}pending\n/);
    expect(out).toMatch(/ {2}order {10}A-1\n/);
    expect(out).toMatch(/ {2}deadline {7}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(in 6d 21h\)\n/);
    expect(out).toMatch(/ {2}next attempt {3}\S+Z \(in (9|10)m( \d+s)?\)\n/);
    expect(out).toMatch(/ {2}last error {5}Ad service answered 503: try again later\n/);
    expect(out).toMatch(/history {8}2 attempt\(s\), oldest first:\n/);
    const attempts = out.split('\n').filter((line) => line.startsWith('    '));
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatch(
      /^ {4}\S+Z \(1m( \d+s)? ago\) +120ms +permanent +404 +click_token not found$/,
    );
    expect(attempts[1]).toMatch(/3\.2s +transient +503 +try again later$/);
  });

  it('shows both jobs of an order with --order, the confirmation first', async () => {
    const outbox = db.open();
    const clickedAt = Date.now() - H;
    await outbox.confirm({ orderId: 'A-2', valueMicros: 5, click: { token: token(2), clickedAt } });
    const [claimed] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    if (claimed === undefined) throw new Error('nothing claimed');
    await outbox.complete(claimed, {
      now: Date.now(),
      campaignId: 'cmp_42',
      attempt: { startedAt: Date.now(), durationMs: 80, outcome: 'delivered', status: 201, detail: null },
    });
    await outbox.refund({ orderId: 'A-2' });
    await outbox.close();

    const json = await run(['job', '--db', db.file, '--order', 'A-2', '--json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.out);
    expect(report.orderId).toBe('A-2');
    expect(report.jobs.map((j: { kind: string }) => j.kind)).toEqual(['confirm', 'refund']);
    expect(report.jobs[0]).toMatchObject({ state: 'delivered', campaignId: 'cmp_42' });
    expect(report.jobs[0].history).toEqual([expect.objectContaining({ outcome: 'delivered', status: 201 })]);
    expect(report.jobs[1]).toMatchObject({ state: 'pending', campaignId: 'cmp_42', history: [] });

    const textOut = await run(['job', '--db', db.file, '--order', 'A-2']);
    expect(textOut.out.match(/^job /gm)).toHaveLength(2);
    expect(textOut.out).toMatch(/history {8}no attempt recorded/);
  });

  it('exits 1 for an unknown id or order, and 2 without an id or with both', async () => {
    db.open().close();
    expect(await run(['job', '--db', db.file, 'nope'])).toMatchObject({
      code: 1,
      err: expect.stringMatching(/no job with id nope/),
    });
    expect(await run(['job', '--db', db.file, '--order', 'X'])).toMatchObject({
      code: 1,
      err: expect.stringMatching(/no job for order X/),
    });
    expect((await run(['job', '--db', db.file])).code).toBe(2);
    expect((await run(['job', '--db', db.file, '1', '--order', 'X'])).code).toBe(2);
  });

  it("shows a delivery's status (2xx when the status was not recorded), never 'no answer'", async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'A-3',
      valueMicros: 5,
      click: { token: token(3), clickedAt: Date.now() - H },
    });
    const [claimed] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    if (claimed === undefined) throw new Error('nothing claimed');
    // What the Dispatcher records of a delivery: no status (the client gives the body), no detail.
    await outbox.complete(claimed, {
      now: Date.now(),
      campaignId: 'cmp_7',
      attempt: { startedAt: Date.now(), durationMs: 80, outcome: 'delivered', status: null, detail: null },
    });
    await outbox.close();
    const { code, out } = await run(['job', '--db', db.file, claimed.id]);
    expect(code).toBe(0);
    const [attempt] = out.split('\n').filter((line) => line.startsWith('    '));
    expect(attempt).toMatch(/80ms +delivered +2xx$/);
    expect(out).not.toMatch(/no answer/);
  });

  /** The job command on a backend that does not keep every job's attempts, whose history gives `history`. */
  function partialHistory(
    history: (id: string, kept: () => Promise<AttemptRecord[]>) => Promise<AttemptRecord[]>,
  ) {
    return createJobCommand({
      now: () => Date.now(),
      openBackend: async (flags, env) => {
        const opened = await defaultContext.openBackend(flags, env);
        const features = { ...opened.outbox.features, attemptHistory: false };
        const kept = opened.outbox.history.bind(opened.outbox);
        const outbox = new Proxy(opened.outbox, {
          get: (target, key) =>
            key === 'features'
              ? features
              : key === 'history'
                ? (id: string) => history(id, () => kept(id))
                : Reflect.get(target, key),
        });
        return { ...opened, outbox };
      },
    });
  }

  it("shows the attempts a backend kept for a job even when it does not keep every job's (SQS's dead letters)", async () => {
    const outbox = db.open();
    const id = await seedDiedThenRetried(outbox, Date.now() - 60_000);
    await outbox.close();
    const command = partialHistory((_, kept) => kept());
    const io = captureIo();
    expect(await command.run(['--db', db.file, id], io)).toBe(0);
    expect(io.out()).toMatch(/history {8}2 attempt\(s\), oldest first:/);
    expect(io.out()).not.toMatch(/none kept|keeps no/);
    const json = captureIo();
    await command.run(['--db', db.file, id, '--json'], json);
    expect(JSON.parse(json.out()).history).toHaveLength(2);
  });

  it('says none was kept when such a backend has none for the job (JSON: null, not an empty history)', async () => {
    const outbox = db.open();
    const id = await seedDiedThenRetried(outbox, Date.now() - 60_000);
    await outbox.close();
    const command = partialHistory(async () => []);
    const io = captureIo();
    expect(await command.run(['--db', db.file, id], io)).toBe(0);
    expect(io.out()).toMatch(/history {8}none kept \(this backend does not keep every job's attempts\)/);
    const json = captureIo();
    await command.run(['--db', db.file, id, '--json'], json);
    expect(JSON.parse(json.out()).history).toBeNull();
  });
});

describe('postback job after real deliveries', () => {
  it('records what the Dispatcher saw: a 404 that killed the job, then after a replay a 503', async () => {
    const world: SandboxWorld = await startSandboxWorld();
    try {
      const outbox = db.open();
      // A token the service never issued: it answers 404 and the job goes dead.
      await outbox.confirm({
        orderId: 'never-issued',
        valueMicros: 1,
        click: { token: 'tok_never_issued_by_the_service', clickedAt: Date.now() },
      });
      await outbox.close();
      const worker = (io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } })) =>
        main(
          [
            'worker',
            '--db',
            db.file,
            '--base-url',
            world.url,
            '--drain',
            '--poll-ms',
            '20',
            '--backoff-base-ms',
            '600000',
            '--backoff-min-ms',
            '600000',
            '--backoff-max-ms',
            '600000',
          ],
          io,
        );
      expect(await worker()).toBe(0);
      expect((await run(['dlq', 'replay', '--db', db.file, '--all'])).code).toBe(0);
      await world.setFaults({ error_rate: 1, error_status: 503 });
      expect(await worker()).toBe(0);

      const { code, out } = await run(['job', '--db', db.file, '--order', 'never-issued', '--json']);
      expect(code).toBe(0);
      const [job] = JSON.parse(out).jobs;
      expect(job.state).toBe('pending');
      expect(job.history.map((a: { outcome: string; status: number }) => [a.outcome, a.status])).toEqual([
        ['permanent', 404],
        ['transient', 503],
      ]);
      const textOut = (await run(['job', '--db', db.file, job.id])).out;
      expect(textOut).toMatch(/permanent +404/);
      expect(textOut).toMatch(/transient +503/);
    } finally {
      await world.close();
    }
  }, 30_000);
});
