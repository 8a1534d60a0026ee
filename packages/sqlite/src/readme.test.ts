/** The README's options table of `createSqliteOutbox` names exactly the options of its schema, defaults included. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sqliteOutboxOptionsSchema } from './options.ts';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** Rows of the first Markdown table after `heading`, as cells. */
function tableAfter(heading: string): string[][] {
  const from = README.indexOf(heading);
  expect(from, heading).toBeGreaterThanOrEqual(0);
  const lines = README.slice(from).split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows.slice(2); // header and separator
}

describe('README of @postback/sqlite', () => {
  it('lists every option of createSqliteOutbox and no other, each with its default', () => {
    const rows = tableAfter('`createSqliteOutbox(options)`');
    const names = rows.map((cells) => (cells[0] ?? '').replace(/`/g, ''));
    expect(names.sort()).toEqual(Object.keys(sqliteOutboxOptionsSchema.shape).sort());
    const defaults = sqliteOutboxOptionsSchema.parse({ filename: 'x.db' }) as Record<string, unknown>;
    for (const cells of rows) {
      const name = (cells[0] ?? '').replace(/`/g, '');
      const value = name === 'filename' ? undefined : defaults[name];
      if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') {
        expect(cells[2], name).toContain(`\`${typeof value === 'string' ? `'${value}'` : value}\``);
      }
    }
  });
});
