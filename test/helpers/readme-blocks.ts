/**
 * The fenced code blocks of the repository's READMEs, for the tests that type-check or run them
 * (`test/readme-code.test.ts`, the quick start's and the sandbox tour's tests).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A TypeScript block of a README, with what its annotation says about it. */
export interface ReadmeBlock {
  /** README path relative to the repository root. */
  readme: string;
  /** 1-based line of the opening fence. */
  fenceLine: number;
  code: string;
  /** `checked`: a whole file; `declare`: checked after `prelude`; `fragment`: not checked. */
  mode: 'checked' | 'declare' | 'fragment';
  /** Text prepended before checking (a `declare` annotation's body), ending in a newline or empty. */
  prelude: string;
  preludeLines: number;
  /** A fragment's stated reason. */
  reason: string;
}

/** Every README the checks cover: root, `packages/*`, `examples/*`, `bench/`. Paths relative to `root`. */
export function readmeFiles(root: string): string[] {
  const inside = (dir: string) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `${dir}/${d.name}/README.md`);
  return ['README.md', ...inside('packages'), ...inside('examples'), 'bench/README.md']
    .filter((f) => existsSync(join(root, f)))
    .sort();
}

/** Every fenced block of a Markdown text whose info string's first word is in `langs`. */
export function fencedBlocks(
  markdown: string,
  langs: readonly string[],
): Array<{ fenceLine: number; info: string; code: string; annotation: string | null }> {
  const lines = markdown.split('\n');
  const out: Array<{ fenceLine: number; info: string; code: string; annotation: string | null }> = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const [, indent = '', fence = '```', lang = ''] = open;
    let end = i + 1;
    while (end < lines.length && (lines[end] ?? '').trim() !== fence) end++;
    if (langs.includes(lang)) {
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n');
      out.push({
        fenceLine: i + 1,
        info: `${lang}${open[4] ?? ''}`.trim(),
        code,
        annotation: annotationBefore(lines, i),
      });
    }
    i = end;
  }
  return out;
}

/** The `<!-- readme-check: … -->` comment right before line `fence` (blank lines between allowed). */
function annotationBefore(lines: string[], fence: number): string | null {
  let j = fence - 1;
  while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
  if (j < 0 || !(lines[j] ?? '').trimEnd().endsWith('-->')) return null;
  let start = j;
  while (start >= 0 && !(lines[start] ?? '').trimStart().startsWith('<!--')) start--;
  if (start < 0) return null;
  const comment = lines
    .slice(start, j + 1)
    .join('\n')
    .trim()
    .replace(/^<!--/, '')
    .replace(/-->$/, '');
  const m = /^\s*readme-check:([\s\S]*)$/.exec(comment);
  return m ? (m[1] ?? '') : null;
}

/** The TypeScript blocks of one README (`readme` relative to `root`), with their annotations parsed. */
export function extractReadmeBlocks(root: string, readme: string): ReadmeBlock[] {
  const text = readFileSync(join(root, readme), 'utf8');
  return fencedBlocks(text, ['ts', 'typescript']).map(({ fenceLine, code, annotation }) => {
    const block: ReadmeBlock = {
      readme,
      fenceLine,
      code,
      mode: 'checked',
      prelude: '',
      preludeLines: 0,
      reason: '',
    };
    if (annotation === null) return block;
    const declare = /^\s*declare\b[ \t]*\n?([\s\S]*)$/.exec(annotation);
    if (declare) {
      const body = (declare[1] ?? '').replace(/\s+$/, '');
      const prelude = body === '' ? '' : `${body}\n`;
      return { ...block, mode: 'declare', prelude, preludeLines: prelude.split('\n').length - 1 };
    }
    const fragment = /^\s*fragment\b\s*[—:-]?\s*([\s\S]*)$/.exec(annotation);
    if (fragment) return { ...block, mode: 'fragment', reason: (fragment[1] ?? '').trim() };
    throw new Error(`${readme}:${fenceLine}: unknown readme-check annotation '${annotation.trim()}'`);
  });
}
