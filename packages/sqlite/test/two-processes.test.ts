/**
 * Two worker processes on one SQLite file never claim the same job: each claim is one UPDATE … RETURNING
 * inside BEGIN IMMEDIATE, so the second process waits for the first's write lock and then sees the jobs it
 * took as inflight. Real child processes, a real file.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { createSqliteOutbox } from '../src/outbox.ts';
import { type TempDatabase, tempDatabase } from './temp-files.ts';

const CLAIMER = fileURLToPath(new URL('./fixtures/claimer.ts', import.meta.url));
const JOBS = 600;

let temp: TempDatabase | undefined;
const children: ChildProcessWithoutNullStreams[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  temp?.cleanup();
});

function startClaimer(filename: string) {
  const child = spawn(process.execPath, ['--conditions=@postback/source', CLAIMER, filename], {
    stdio: 'pipe',
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const ready = new Promise<void>((resolve, reject) => {
    const check = () => (out.startsWith('ready\n') ? resolve() : undefined);
    child.stdout.on('data', check);
    child.once('exit', (code) => reject(new Error(`claimer exited (${code}) before ready: ${err}`)));
  });
  const result = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`claimer exited with ${code}: ${err}`);
    return JSON.parse(out.slice('ready\n'.length)) as Array<{ id: string; token: string; attempts: number }>;
  });
  return { child, ready, result };
}

it('two processes claiming from one file never claim the same job', async () => {
  temp = tempDatabase();
  const outbox = createSqliteOutbox({ filename: temp.filename });
  const clickedAt = Date.now() - 60_000;
  await Promise.all(
    Array.from({ length: JOBS }, (_, i) =>
      outbox.confirm({ orderId: `ord_${i}`, valueMicros: i, click: { token: 'tok_p', clickedAt } }),
    ),
  );

  const a = startClaimer(temp.filename);
  const b = startClaimer(temp.filename);
  await Promise.all([a.ready, b.ready]);
  a.child.stdin.write('go\n');
  b.child.stdin.write('go\n');
  const [fromA, fromB] = await Promise.all([a.result, b.result]);

  const idsA = new Set(fromA.map((c) => c.id));
  const idsB = new Set(fromB.map((c) => c.id));
  expect(fromA.length).toBeGreaterThan(0);
  expect(fromB.length).toBeGreaterThan(0);
  expect([...idsA].filter((id) => idsB.has(id))).toEqual([]);
  expect(idsA.size + idsB.size).toBe(JOBS);
  expect(fromA.length + fromB.length).toBe(JOBS);
  expect([...fromA, ...fromB].every((c) => c.attempts === 1)).toBe(true);
  const stats = await outbox.stats(Date.now());
  expect(stats.counts.delivered).toBe(JOBS);
  await outbox.close();
}, 60_000);
