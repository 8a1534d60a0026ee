/** The options table in the README is the one schema's rendering, so no default is written twice. */
import { describe, it } from 'vitest';
import { expectReadmeOptionsTable } from '../../../test/helpers/readme-options-table.ts';

describe('capture options table', () => {
  it('the README of @postback/fastify shows exactly the table rendered from the schema', () => {
    expectReadmeOptionsTable(new URL('../README.md', import.meta.url));
  });
});
