/**
 * `docs/architecture.md` stays true: every repository path it names exists, and every function it names
 * as `name()` occurs in one of the files named in the same step (list item or paragraph), so a rename or a
 * move that leaves the walk behind fails here.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PATH = /^(?:packages|test|bench|docs|examples|scripts)\/[\w./-]+$/;
const FUNCTION = /^(?:[A-Za-z_$][\w$]*\.)*([A-Za-z_$][\w$]*)\(\)$/;

/** The steps of a Markdown text: a list item or a paragraph each, as its lines joined. */
function stepsOf(markdown: string): string[] {
  const steps: string[] = [];
  let current: string[] = [];
  const end = () => {
    if (current.length > 0) steps.push(current.join(' '));
    current = [];
  };
  for (const line of markdown.split('\n')) {
    if (line.trim() === '' || /^\s*(?:\d+\.|-|#+)\s/.test(line)) end();
    if (line.trim() !== '') current.push(line.trim());
  }
  end();
  return steps;
}

/** What in `markdown` is not true of the files under `root`: one sentence a problem. */
function problemsOf(markdown: string, root: string): string[] {
  const problems: string[] = [];
  const read = (path: string) => readFileSync(join(root, path), 'utf8');
  for (const step of stepsOf(markdown)) {
    const quoted = [...step.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
    const files: string[] = [];
    for (const path of quoted.filter((text) => PATH.test(text))) {
      if (!existsSync(join(root, path))) problems.push(`${path} does not exist`);
      else if (statSync(join(root, path)).isFile()) files.push(path);
    }
    for (const text of quoted) {
      const name = FUNCTION.exec(text)?.[1];
      if (name === undefined) continue;
      const word = new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`);
      if (files.length === 0) problems.push(`${text} is named in a step that names no file: "${step}"`);
      else if (!files.some((file) => word.test(read(file)))) {
        problems.push(`${text} is not found in ${files.join(' or ')}`);
      }
    }
  }
  return problems;
}

describe('docs/architecture.md', () => {
  it('finds a path that does not exist and a function its step does not hold', () => {
    const planted = [
      '1. `packages/core/src/policy.ts` — `deadlineOf()` and `outbox.noSuchFunction()`.',
      '2. `packages/core/src/no-such-file.ts` — `deadlineOf()`.',
      '',
      'A paragraph with `deadlineOf()` and no file.',
    ].join('\n');
    expect(problemsOf(planted, ROOT)).toEqual([
      'outbox.noSuchFunction() is not found in packages/core/src/policy.ts',
      'packages/core/src/no-such-file.ts does not exist',
      'deadlineOf() is named in a step that names no file: "2. `packages/core/src/no-such-file.ts` — `deadlineOf()`."',
      'deadlineOf() is named in a step that names no file: "A paragraph with `deadlineOf()` and no file."',
    ]);
  });

  it('names only paths that exist and functions found in the files of their step', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    expect(stepsOf(doc).length).toBeGreaterThan(30);
    expect(problemsOf(doc, ROOT)).toEqual([]);
  });

  it('is linked from the root README', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('(docs/architecture.md)');
  });
});
