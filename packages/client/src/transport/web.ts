/**
 * Default transport on every runtime that is not Node: edge runtimes and Cloudflare Workers, browsers,
 * and Bun and Deno, which the `bun` and `deno` conditions of `#transport` send here ahead of `node`
 * (Bun's `undici` is a placeholder, and Deno's npm `undici` needs `--allow-env`; their own `fetch` needs
 * only network access). The global `fetch`. Imports nothing Node-specific, so `@postback/core` stays edge-safe.
 */
import { createFetchTransport } from './fetch.ts';
import type { Transport, TransportSettings } from './types.ts';
import { TransportUnavailable } from './unavailable.ts';

/**
 * The transport a client uses when no `fetch` is injected.
 *
 * @example
 * ```ts
 * const transport = createDefaultTransport({ connections: 64 });
 * ```
 */
export function createDefaultTransport(_settings: TransportSettings): Transport {
  // Looked up per call, not captured, so a runtime or test that replaces globalThis.fetch later is honoured.
  return createFetchTransport((input, init) => {
    if (typeof globalThis.fetch !== 'function') {
      throw new TransportUnavailable('fetch', 'the fetch transport cannot work here: no global fetch', false);
    }
    return globalThis.fetch(input, init);
  });
}
