/**
 * Core's main entry holds what an app uses, and stays small enough to read: its exported names (values and
 * types), counted with the TypeScript compiler, are at most MAX_MAIN_ENTRY_NAMES, each with TSDoc. What
 * only store and tool authors need is in `@postback/core/store`, never in both entries.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_MAIN_ENTRY_NAMES = 120;

const entry = (name: string) => fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
const program = ts.createProgram([entry('index'), entry('store')], {
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  allowImportingTsExtensions: true,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
});
const checker = program.getTypeChecker();

/** The names an entry exports, each with its documentation comment (empty when it has none). */
function exportsOf(name: string): Map<string, string> {
  const source = program.getSourceFile(entry(name));
  const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  if (module === undefined) throw new Error(`cannot read the exports of ${name}.ts`);
  return new Map(
    checker.getExportsOfModule(module).map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return [symbol.name, ts.displayPartsToString(target.getDocumentationComment(checker)).trim()];
    }),
  );
}

describe("core's public surface", () => {
  const main = exportsOf('index');
  const store = exportsOf('store');

  it(`the main entry exports at most ${MAX_MAIN_ENTRY_NAMES} names`, () => {
    expect(main.size).toBeGreaterThan(50);
    expect(main.size).toBeLessThanOrEqual(MAX_MAIN_ENTRY_NAMES);
  });

  it('every name of either entry has TSDoc', () => {
    const undocumented = [...main, ...store].filter(([, doc]) => doc === '').map(([name]) => name);
    expect(undocumented).toEqual([]);
  });

  it('no name is exported by both entries', () => {
    expect([...store.keys()].filter((name) => main.has(name))).toEqual([]);
  });
});
