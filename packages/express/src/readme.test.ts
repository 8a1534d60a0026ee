/** The options tables in the READMEs are the one schema's rendering, so no default is written twice. */
import { describe, it } from 'vitest';
import { expectReadmeOptionsTable } from '../../../test/helpers/readme-options-table.ts';

describe('capture options tables', () => {
  it.each([
    ['@postback/express', '../README.md'],
    ['@postback/core', '../../core/README.md'],
  ])('the README of %s shows exactly the table rendered from the schema', (_name, path) => {
    expectReadmeOptionsTable(new URL(path, import.meta.url));
  });
});
