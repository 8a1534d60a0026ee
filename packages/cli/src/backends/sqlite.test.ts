import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OptionsError } from '@postback/core';
import { afterEach, describe, expect, it } from 'vitest';
import { open } from './sqlite.ts';

let dir: string | undefined;
function fresh(): string {
  dir = mkdtempSync(join(tmpdir(), 'postback-cli-sqlite-'));
  return join(dir, 'postback.db');
}
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('the --db backend', () => {
  it('opens a durable outbox on the file and says so', async () => {
    const file = fresh();
    const { outbox, describe: text } = await open(file, {});
    const click = { token: 'tok_cli', clickedAt: Date.now() - 1000 };
    expect((await outbox.confirm({ orderId: 'ord_cli', valueMicros: 1, click })).created).toBe(true);
    await outbox.close();
    expect(text).toContain(file);
    expect(text).toContain('journal=wal');
    expect(text).toContain('synchronous=full');
  });

  it('applies POSTBACK_SQLITE_SYNCHRONOUS', async () => {
    const { outbox, describe: text } = await open(fresh(), { POSTBACK_SQLITE_SYNCHRONOUS: 'NORMAL' });
    await outbox.close();
    expect(text).toContain('synchronous=normal');
  });

  it('names the environment variable when its value is bad', async () => {
    await expect(open(fresh(), { POSTBACK_SQLITE_SYNCHRONOUS: 'off' })).rejects.toThrow(
      expect.objectContaining({ constructor: OptionsError, field: 'POSTBACK_SQLITE_SYNCHRONOUS' }),
    );
    await expect(open(fresh(), { POSTBACK_SQLITE_BUSY_TIMEOUT_MS: '5s' })).rejects.toThrow(
      /POSTBACK_SQLITE_BUSY_TIMEOUT_MS/,
    );
  });
});
