/**
 * Copies the Next 16 shop's app sources (`app/`, `lib/`, `instrumentation.ts`) into this workspace, so
 * Next 15 builds the very same app; only `middleware.ts` (Next 15's name for `proxy.ts`) and
 * `next.config.mjs` are this workspace's own. The copies are git-ignored and replaced on every run.
 * Copies, not symlinks: Next resolves a symlinked source by its real path, outside this app and its
 * `node_modules` (where Next 15 is).
 */
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The copied paths, relative to both workspaces. */
export const SHARED_APP_PATHS = ['app', 'lib', 'instrumentation.ts'] as const;

/**
 * Replaces this workspace's copies with the Next 16 shop's current sources.
 *
 * @example
 * ```ts
 * copyShopApp(); // then `next build` in examples/next15-shop
 * ```
 */
export function copyShopApp(): void {
  for (const path of SHARED_APP_PATHS) {
    const from = fileURLToPath(new URL(`../../next-shop/${path}`, import.meta.url));
    const to = fileURLToPath(new URL(`../${path}`, import.meta.url));
    rmSync(to, { recursive: true, force: true });
    cpSync(from, to, { recursive: true });
  }
}

if (import.meta.main) copyShopApp();
