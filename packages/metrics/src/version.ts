/**
 * The version of `@postback/metrics`, read from its own `package.json` (one directory above both `src/`
 * and `dist/`, so the same path serves the sources and the build), for `build_info`.
 */
import { readFileSync } from 'node:fs';

/**
 * The `version` field of `@postback/metrics`' package.json, or `unknown` when it cannot be read (a
 * bundle that left the file behind).
 *
 * @example
 * ```ts
 * metricsPackageVersion(); // "0.1.0"
 * ```
 */
export function metricsPackageVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    return String((manifest as { version: unknown }).version);
  } catch {
    return 'unknown';
  }
}
