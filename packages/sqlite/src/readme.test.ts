/** The README's options table of `createSqliteOutbox` is the schema's rendering, so no default is written twice. */
import { renderOptionsTable } from '@postback/core/store';
import { describe, it } from 'vitest';
import { expectReadmeOptionsTable } from '../../../test/helpers/readme-options-table.ts';
import { sqliteOutboxOptionsSchema } from './options.ts';

describe('the README of @postback/sqlite', () => {
  it('shows exactly the createSqliteOutbox options table rendered from the schema', () => {
    expectReadmeOptionsTable(
      new URL('../README.md', import.meta.url),
      'outbox-options',
      renderOptionsTable(sqliteOutboxOptionsSchema.shape),
    );
  });
});
