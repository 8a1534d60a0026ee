/** README options tables are rendered from the schema's documented rows, in the schema's key order. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { documented, renderOptionsTable } from './options-table.ts';

describe('renderOptionsTable', () => {
  it('renders one row per option, in key order, from the rows documented on the schemas', () => {
    const shape = z.strictObject({
      secure: documented(z.boolean().default(true), 'boolean', '`true`', 'Secure attribute.'),
      name: documented(z.string().optional(), 'string \\| null', '—', 'The name.'),
    }).shape;
    expect(renderOptionsTable(shape).split('\n')).toEqual([
      '| option | type | default | what it does |',
      '|---|---|---|---|',
      '| `secure` | `boolean` | `true` | Secure attribute. |',
      '| `name` | `string \\| null` | — | The name. |',
    ]);
  });

  it('refuses an option that has no row, naming it', () => {
    expect(() => renderOptionsTable(z.strictObject({ bare: z.string() }).shape)).toThrow(/option bare/);
  });
});
