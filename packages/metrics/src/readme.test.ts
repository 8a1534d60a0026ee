/** The README's options table is the schema's rendering, so no default is written twice. */
import { describe, it } from 'vitest';
import { expectReadmeOptionsTable } from '../../../test/helpers/readme-options-table.ts';
import { renderMetricsOptionsTable } from './options.ts';

describe('the README of @postback/metrics', () => {
  it('shows exactly the options table rendered from the schema', () => {
    expectReadmeOptionsTable(
      new URL('../README.md', import.meta.url),
      'metrics-options',
      renderMetricsOptionsTable(),
    );
  });
});
