/**
 * An options table a package README shows, between `<!-- NAME:start -->` and `<!-- NAME:end -->`, must be
 * exactly its schema's rendering, so no default is written twice. By default the capture options
 * (`capture-options`, `renderCaptureOptionsTable()`), which every framework adapter shows; packages with
 * options of their own (dashboard, metrics) pass their marker name and rendering.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { renderCaptureOptionsTable } from '../../packages/core/src/capture/options.ts';

const markedTable = (name: string) =>
  new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`);

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
 * Asserts that the README at `readme` (e.g. `new URL('../README.md', import.meta.url)`) has the `name`
 * markers and, between them, the table `rendered` from the schema, padding aside.
 */
export function expectReadmeOptionsTable(
  readme: URL,
  name = 'capture-options',
  rendered: string = renderCaptureOptionsTable(),
): void {
  const table = markedTable(name).exec(readFileSync(readme, 'utf8'))?.[1];
  expect(table, `${name} markers in ${readme.pathname}`).toBeDefined();
  expect(normaliseTable(table ?? '')).toEqual(normaliseTable(rendered));
}
