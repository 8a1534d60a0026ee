/**
 * The version of the CLI, read from its own `package.json` (one directory above both `src/` and `dist/`,
 * so the same path serves the sources and the build).
 */
import { readFileSync } from 'node:fs';

/**
 * The `version` field of `@postback/cli`'s package.json.
 *
 * @example
 * ```ts
 * cliVersion(); // "0.1.0"
 * ```
 */
export function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return String((manifest as { version: unknown }).version);
}
