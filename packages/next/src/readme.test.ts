/** The options table in the README is the one schema's rendering, so no default is written twice. */
import { readFileSync } from 'node:fs';
import { renderCaptureOptionsTable } from '@postback/core';
import { describe, expect, it } from 'vitest';

const tableIn = (path: string): string | undefined =>
  /<!-- capture-options:start -->\n([\s\S]*?)\n<!-- capture-options:end -->/.exec(
    readFileSync(new URL(path, import.meta.url), 'utf8'),
  )?.[1];

/** A Markdown table with cell padding and separator dashes normalised (the formatter pads columns). */
const normalise = (table: string | undefined): string[] =>
  (table ?? '')
    .trim()
    .split('\n')
    .map((line) =>
      line
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replace(/^-+$/, '---'))
        .join('|'),
    );

describe('the @postback/next README', () => {
  it('shows exactly the capture options table rendered from the schema', () => {
    expect(normalise(tableIn('../README.md'))).toEqual(normalise(renderCaptureOptionsTable()));
  });
});
