/** The README's options table is the schema's rendering, so no default is written twice. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderMetricsOptionsTable } from './options.ts';

const MARKED = /<!-- metrics-options:start -->\n([\s\S]*?)\n<!-- metrics-options:end -->/;
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

describe('the README of @postback/metrics', () => {
  it('shows exactly the options table rendered from the schema', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const table = MARKED.exec(readme)?.[1];
    expect(table, 'metrics-options markers').toBeDefined();
    expect(normalise(table ?? '')).toEqual(normalise(renderMetricsOptionsTable()));
  });
});
