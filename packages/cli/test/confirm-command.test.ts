/**
 * `postback confirm`: enqueues one confirmation and names the flag at fault.
 */
import { describe, expect, it } from 'vitest';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

describe('postback confirm', () => {
  const args = () => [
    'confirm',
    '--db',
    db.file,
    '--click-token',
    token(7),
    '--order-id',
    'o-7',
    '--value-micros',
    '1990000',
    '--clicked-at',
    new Date(Date.now() - 60_000).toISOString(),
    '--json',
  ];

  it('enqueues one confirmation, then says the order is already there on a second call', async () => {
    const first = await run(args());
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({
      created: true,
      job: { kind: 'confirm', orderId: 'o-7', state: 'pending' },
    });
    const second = await run(args());
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out)).toMatchObject({ created: false, job: { orderId: 'o-7' } });
    const text = await run(args().slice(0, -1));
    expect(text.out).toMatch(/already has a confirm job/);
    const outbox = db.open();
    expect(await outbox.getByOrder('o-7')).toHaveLength(1);
    await outbox.close();
  });

  it('exits 2 naming --value-micros for a decimal amount, and enqueues nothing', async () => {
    const bad = args();
    bad[bad.indexOf('--value-micros') + 1] = '19.90';
    const { code, err } = await run(bad);
    expect(code).toBe(2);
    expect(err).toMatch(/--value-micros/);
  });

  it('exits 2 naming --click-token when the outbox refuses the token', async () => {
    const bad = args();
    bad[bad.indexOf('--click-token') + 1] = 'has spaces <script>';
    const { code, err } = await run(bad);
    expect(code).toBe(2);
    expect(err).toMatch(/--click-token/);
    const outbox = db.open();
    expect(await outbox.getByOrder('o-7')).toEqual([]);
    await outbox.close();
  });

  it('exits 2 naming a missing required flag and a click time without a zone', async () => {
    const missing = await run(['confirm', '--db', db.file, '--click-token', token(1), '--value-micros', '1']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--order-id is required/);
    const zoneless = args();
    zoneless[zoneless.indexOf('--clicked-at') + 1] = '2026-01-02T03:04:05';
    const noZone = await run(zoneless);
    expect(noZone.code).toBe(2);
    expect(noZone.err).toMatch(/--clicked-at/);
  });
});
