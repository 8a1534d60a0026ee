/** The options tables in the READMEs are the one schema's rendering, so no default is written twice. */
import { readFileSync } from 'node:fs';
import { renderCaptureOptionsTable } from '@postback/core';
import { describe, expect, it } from 'vitest';

const tableIn = (path: string): string | undefined =>
  /<!-- capture-options:start -->\n([\s\S]*?)\n<!-- capture-options:end -->/.exec(
    readFileSync(new URL(path, import.meta.url), 'utf8'),
  )?.[1];

describe('capture options tables', () => {
  it.each([
    ['@postback/express', '../README.md'],
    ['@postback/core', '../../core/README.md'],
  ])('the README of %s shows exactly the table rendered from the schema', (_name, path) => {
    expect(tableIn(path)).toBe(renderCaptureOptionsTable());
  });
});
