/** The README's options tables are the schemas' renderings, so no default is written twice. */
import { describe, it } from 'vitest';
import { expectReadmeOptionsTable } from '../../../test/helpers/readme-options-table.ts';
import { renderDispatcherOptionsTable } from './queue/dispatcher/options.ts';

describe('the README of @postback/core', () => {
  it('shows exactly the capture options table rendered from the schema', () => {
    expectReadmeOptionsTable(new URL('../README.md', import.meta.url));
  });

  it('shows exactly the Dispatcher options table rendered from the schema', () => {
    expectReadmeOptionsTable(
      new URL('../README.md', import.meta.url),
      'dispatcher-options',
      renderDispatcherOptionsTable(),
    );
  });
});
