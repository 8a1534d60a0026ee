/** The options table of the README is the schema's rendering, so no default is written twice. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderDashboardOptionsTable } from './options.ts';

const MARKED = /<!-- dashboard-options:start -->\n([\s\S]*?)\n<!-- dashboard-options:end -->/;

/** A Markdown table as lines, with cell padding and separator dashes normalised (the formatter pads columns). */
const normalise = (table: string) =>
  table
    .trim()
    .split('\n')
    .map((line) =>
      line
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replace(/^-+$/, '---'))
        .join('|'),
    );

describe('the README of @postback/dashboard', () => {
  it('shows exactly the options table rendered from the schema', () => {
    const table = MARKED.exec(readFileSync(new URL('../README.md', import.meta.url), 'utf8'))?.[1];
    expect(table).toBeDefined();
    expect(normalise(table ?? '')).toEqual(normalise(renderDashboardOptionsTable()));
  });
});
