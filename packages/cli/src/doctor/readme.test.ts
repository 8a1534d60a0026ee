/** The README's table of `doctor()`'s options is the schema's rendering, so no default is written twice. */
import { describe, it } from 'vitest';
import { expectReadmeOptionsTable } from '../../../../test/helpers/readme-options-table.ts';
import { renderDoctorOptionsTable } from './options.ts';

describe('the README of @postback/cli', () => {
  it("shows exactly doctor()'s options table rendered from the schema", () => {
    expectReadmeOptionsTable(
      new URL('../../README.md', import.meta.url),
      'doctor-options',
      renderDoctorOptionsTable(),
    );
  });
});
