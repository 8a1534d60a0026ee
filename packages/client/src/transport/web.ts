/**
 * Default transport on every runtime that is not Node (edge, workers, browsers, Deno without the node
 * condition): the global `fetch`. Imports nothing Node-specific, so `@postback/core` stays edge-safe.
 */
import { createFetchTransport } from './fetch.ts';
import type { Transport, TransportSettings } from './types.ts';

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
  return createFetchTransport((input, init) => globalThis.fetch(input, init));
}
