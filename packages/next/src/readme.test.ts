/** The options table in the README is the one schema's rendering, so no default is written twice. */
import { describe, it } from 'vitest';
import { expectReadmeOptionsTable } from '../../../test/helpers/readme-options-table.ts';

describe('the @postback/next README', () => {
  it('shows exactly the capture options table rendered from the schema', () => {
    expectReadmeOptionsTable(new URL('../README.md', import.meta.url));
  });
});
