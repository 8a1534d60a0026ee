/**
 * A README names only what its reader can reach. Every name a README code block imports from a
 * `@postback/*` entry is exported by that entry (fragment blocks included, which `readme-code.test.ts`
 * does not type-check); and a name the prose shows in backticks that the sources declare `export` in some
 * module (a `webCryptoHmac`, a `CAPTURE_OPTIONS_SCHEMA`) is exported by a package entry, or is a member
 * (an option, a method, a field) of something exported — unless its paragraph points at the source file it
 * lives in (`src/…`), as a contributor's note does. The public names come from the TypeScript checker over
 * every entry of every package's `exports` map.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { fencedBlocks, readmeFiles } from './helpers/readme-blocks.ts';

const ROOT = join(import.meta.dirname, '..');
const PACKAGES = join(ROOT, 'packages');

/** Each entry of each package as its import specifier (`@postback/core/store`) and source file. */
function packageEntries(): Map<string, string> {
  const entries = new Map<string, string>();
  for (const dir of readdirSync(PACKAGES)) {
    const pkg = JSON.parse(readFileSync(join(PACKAGES, dir, 'package.json'), 'utf8')) as {
      name: string;
      exports?: Record<string, unknown>;
    };
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      const source = (target as Record<string, string> | null)?.['@postback/source'];
      if (typeof source === 'string') {
        entries.set(`${pkg.name}${subpath.slice(1)}`, join(PACKAGES, dir, source));
      }
    }
  }
  return entries;
}

/** What each entry exports, and every name a user can reach: those exports and their members. */
function publicNames(entries: Map<string, string>) {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.base.json'), ts.sys.readFile).config;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const program = ts.createProgram([...entries.values()], { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const byEntry = new Map<string, Set<string>>();
  const reachable = new Set<string>();
  for (const [specifier, file] of entries) {
    const source = program.getSourceFile(file);
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`no module for ${specifier} (${file})`);
    const names = new Set<string>();
    for (const exported of checker.getExportsOfModule(module)) {
      names.add(exported.name);
      reachable.add(exported.name);
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const types = [checker.getDeclaredTypeOfSymbol(symbol), checker.getTypeOfSymbol(symbol)];
      for (const type of types) {
        for (const member of checker.getPropertiesOfType(type)) reachable.add(member.name);
        for (const signature of type.getCallSignatures()) {
          for (const parameter of signature.getParameters()) {
            const parameterType = checker.getTypeOfSymbol(parameter);
            for (const member of checker.getPropertiesOfType(parameterType)) reachable.add(member.name);
          }
          for (const member of checker.getPropertiesOfType(signature.getReturnType())) {
            reachable.add(member.name);
          }
        }
      }
    }
    byEntry.set(specifier, names);
  }
  return { byEntry, reachable };
}

/** Names some module of a package's sources declares `export` (tests aside). */
function exportedInSources(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        if (entry !== 'node_modules' && entry !== 'dist') walk(path);
      } else if (entry.endsWith('.ts') && !entry.endsWith('.test.ts')) {
        const declared = readFileSync(path, 'utf8').matchAll(
          /^export (?:declare )?(?:async )?(?:function\*?|const|let|abstract class|class|interface|type|enum) ([A-Za-z_$][\w$]*)/gm,
        );
        for (const match of declared) names.add(match[1] as string);
      }
    }
  };
  for (const dir of readdirSync(PACKAGES)) walk(join(PACKAGES, dir, 'src'));
  return names;
}

/** `import { a, type B, c as d } from '@postback/x'` in `code`: each specifier with the names it imports. */
function importsOf(code: string): Array<{ from: string; names: string[] }> {
  const found = code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"](@postback\/[^'"]+)['"]/g);
  return [...found].map((match) => ({
    from: match[2] as string,
    names: (match[1] as string)
      .split(',')
      .map(
        (part) =>
          part
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)[0] as string,
      )
      .filter((name) => name !== ''),
  }));
}

/** The paragraphs of a Markdown text outside its fenced blocks, each with the line it starts on. */
function paragraphsOf(markdown: string): Array<{ line: number; text: string }> {
  const paragraphs: Array<{ line: number; text: string }> = [];
  let fence: string | null = null;
  let current: { line: number; lines: string[] } | null = null;
  const end = () => {
    if (current !== null) paragraphs.push({ line: current.line, text: current.lines.join('\n') });
    current = null;
  };
  markdown.split('\n').forEach((line, index) => {
    const opens = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== null) {
      if (line.trim() === fence) fence = null;
      return;
    }
    if (opens !== undefined) {
      end();
      fence = opens;
      return;
    }
    if (line.trim() === '' || /^\s*(?:[-*]|\d+\.|#+)\s/.test(line)) end();
    if (line.trim() === '') return;
    current ??= { line: index + 1, lines: [] };
    current.lines.push(line);
  });
  end();
  return paragraphs;
}

describe('names in the READMEs', () => {
  const entries = packageEntries();
  const { byEntry, reachable } = publicNames(entries);
  const internal = new Set([...exportedInSources()].filter((name) => !reachable.has(name)));
  // The packages' READMEs and the root's: an example's README speaks of the example's own exports.
  const readmes = readmeFiles(ROOT)
    .filter((file) => !file.startsWith('examples/') && !file.startsWith('bench/'))
    .map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

  it('the public names are read from every entry, and a name no entry exports is told apart', () => {
    expect(byEntry.get('@postback/core')).toContain('createDispatcher');
    expect(byEntry.get('@postback/core/store')).toContain('planRefund');
    expect(reachable).toContain('cookieName'); // an option of createClickCapture
    expect(internal).toContain('classifyFailure'); // declared `export` in its module, exported by no entry
  });

  it('every name a code block imports from a @postback entry is exported by that entry', () => {
    const problems: string[] = [];
    for (const { file, text } of readmes) {
      for (const block of fencedBlocks(text, ['ts', 'typescript', 'js', 'javascript', 'tsx'])) {
        for (const { from, names } of importsOf(block.code)) {
          const exported = byEntry.get(from);
          if (exported === undefined) problems.push(`${file}:${block.fenceLine}: no entry ${from}`);
          else {
            for (const name of names.filter((n) => !exported.has(n))) {
              problems.push(`${file}:${block.fenceLine}: ${from} does not export ${name}`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('the prose names no internal export, unless its paragraph names the source file it is in', () => {
    const problems: string[] = [];
    for (const { file, text } of readmes) {
      for (const paragraph of paragraphsOf(text)) {
        if (/`(?:packages\/[\w-]+\/)?src\/[\w./-]+`/.test(paragraph.text)) continue;
        for (const match of paragraph.text.matchAll(/`([A-Za-z_$][\w$]*)(?:\([^`]*\))?`/g)) {
          const name = match[1] as string;
          // Single lower-case words (`fail`, `backoff`) are as often plain words, options or commands.
          if (/[A-Z]/.test(name) && internal.has(name)) {
            problems.push(`${file}:${paragraph.line}: \`${name}\` is exported by no entry`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
