/** The README's options table is the schema's rendering, so no default is written twice. */
import { describe, it } from 'vitest';
import { expectReadmeOptionsTable } from '../../../test/helpers/readme-options-table.ts';
import { renderDashboardOptionsTable } from './options.ts';

describe('the README of @postback/dashboard', () => {
  it('shows exactly the options table rendered from the schema', () => {
    expectReadmeOptionsTable(
      new URL('../README.md', import.meta.url),
      'dashboard-options',
      renderDashboardOptionsTable(),
    );
  });
});
