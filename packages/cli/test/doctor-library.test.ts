/**
 * `doctor()` from the package's main entry, against a real sandbox: the same checks as the command, an
 * outbox given open is left open while one it opened is closed, and bad options are named.
 */
import { OptionsError } from '@postback/core';
import { createSqliteOutbox } from '@postback/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHECK_NAMES, doctor } from '../src/index.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';
import { type ServiceFixture, startService } from './service-fixture.ts';

let db: DbFixture;
let service: ServiceFixture;

beforeEach(async () => {
  db = dbFixture();
  service = await startService();
});
afterEach(async () => {
  await service?.close();
  db.cleanup();
});

describe('doctor()', () => {
  it('returns every check in order; an outbox it was given stays open, one it opened is closed', async () => {
    const outbox = createSqliteOutbox({ filename: db.file });
    const report = await doctor({
      baseUrl: service.url,
      apiKey: service.keys.conversions,
      outbox,
      skip: ['worker'],
    });
    expect(report.checks.map((c) => c.name)).toEqual([...CHECK_NAMES]);
    expect(report.checks.find((c) => c.name === 'key')).toMatchObject({ ok: true, status: 'pass' });
    expect(report.checks.find((c) => c.name === 'secret')).toMatchObject({ status: 'skip' });
    expect(report.ok).toBe(true);
    // Still open: the caller's.
    expect((await outbox.stats(Date.now())).counts.pending).toBe(0);
    await outbox.close();

    let opened: ReturnType<typeof createSqliteOutbox> | undefined;
    const again = await doctor({
      baseUrl: service.url,
      apiKey: service.keys.conversions,
      outbox: async () => {
        opened = createSqliteOutbox({ filename: db.file });
        return opened;
      },
      secret: null,
    });
    expect(again.checks.find((c) => c.name === 'outbox')?.ok).toBe(true);
    expect(again.checks.find((c) => c.name === 'secret')).toMatchObject({
      ok: false,
      detail: 'POSTBACK_SECRET is not set',
    });
    await expect(opened?.stats(Date.now())).rejects.toThrow();
  });

  it('refuses an unknown option or check name with an OptionsError naming it', async () => {
    await expect(doctor({ baseUrl: service.url, timeout: 5 } as never)).rejects.toThrow(OptionsError);
    await expect(doctor({ baseUrl: service.url, skip: ['nothing'] } as never)).rejects.toThrow(/skip/);
  });
});
