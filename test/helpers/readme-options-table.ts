/**
 * The capture-options table a package README shows, between `<!-- capture-options:start -->` and
 * `<!-- capture-options:end -->`, must be exactly the schema's rendering (`renderCaptureOptionsTable()`),
 * so no default is written twice. Used by the readme tests of the framework adapters.
 */
import { readFileSync } from 'node:fs';
import { renderCaptureOptionsTable } from '@postback/core';
import { expect } from 'vitest';

const MARKED_TABLE = /<!-- capture-options:start -->\n([\s\S]*?)\n<!-- capture-options:end -->/;

/** A Markdown table as lines, with cell padding and separator dashes normalised (the formatter pads columns). */
const normaliseTable = (table: string): string[] =>
  table
    .trim()
    .split('\n')
    .map((line) =>
      line
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replace(/^-+$/, '---'))
        .join('|'),
    );

/**
 * Asserts that the README at `readme` (e.g. `new URL('../README.md', import.meta.url)`) has the
 * capture-options markers and, between them, the table rendered from the schema, padding aside.
 */
export function expectReadmeOptionsTable(readme: URL): void {
  const table = MARKED_TABLE.exec(readFileSync(readme, 'utf8'))?.[1];
  expect(table, `capture-options markers in ${readme.pathname}`).toBeDefined();
  expect(normaliseTable(table ?? '')).toEqual(normaliseTable(renderCaptureOptionsTable()));
}
