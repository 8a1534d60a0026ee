/** The options table in the README is the one schema's rendering, so no default is written twice. */
import { readFileSync } from 'node:fs';
import { renderCaptureOptionsTable } from '@postback/core';
import { describe, expect, it } from 'vitest';

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

describe('capture options table', () => {
  it('the README of @postback/koa shows exactly the table rendered from the schema', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = /<!-- capture-options:start -->\n([\s\S]*?)\n<!-- capture-options:end -->/.exec(
      readme,
    )?.[1];
    expect(normalise(table)).toEqual(normalise(renderCaptureOptionsTable()));
  });
});
