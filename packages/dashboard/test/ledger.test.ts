/**
 * The dashboard's replays and purges write a ledger row per job moved, naming the token's holder
 * (`tokenName`), over a real HTTP server on a real SQLite outbox.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fillQueue, serveDashboard, TOKEN, tempOutbox } from './fixtures.ts';

const NOW = Date.now();
let db: ReturnType<typeof tempOutbox>;
let server: { url: string; close(): Promise<void> } | undefined;

const post = async (path: string, body: unknown) => {
  const res = await fetch(new URL(path, server?.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  return res.json();
};

beforeEach(async () => {
  db = tempOutbox(() => NOW);
  await fillQueue(db.outbox, NOW);
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await db.cleanup();
});

describe('the ledger of dashboard actions', () => {
  it("a replay and a purge write one row per job moved with the token's name", async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN, tokenName: 'ana', now: () => NOW });
    const dead = (await db.outbox.listDead()).map((job) => job.id);
    expect(dead.length).toBeGreaterThanOrEqual(2);
    const [first, ...rest] = dead as [string, ...string[]];
    expect(await post('api/replay', { ids: [first] })).toEqual({ replayed: 1 });
    expect(await post('api/purge', { ids: rest })).toEqual({ purged: rest.length });
    const actions = (await db.outbox.readLedger()).filter((row) => row.actor !== 'dispatcher');
    expect(actions.map((row) => [row.kind, row.jobId, row.actor])).toEqual([
      ['replay', first, 'ana'],
      ...rest.map((id) => ['purge', id, 'ana']),
    ]);
    expect(JSON.stringify(actions)).not.toContain(TOKEN);
  });

  it('without a tokenName the rows name "dashboard"', async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN, now: () => NOW });
    const [id] = (await db.outbox.listDead()).map((job) => job.id);
    await post('api/replay', { ids: [id] });
    const actions = (await db.outbox.readLedger()).filter((row) => row.actor !== 'dispatcher');
    expect(actions.map((row) => row.actor)).toEqual(['dashboard']);
  });
});
