/** Default transport under the `node` export condition: undici keep-alive pools (measured fastest on Node). */
import type { Transport, TransportSettings } from './types.ts';
import { createUndiciTransport } from './undici.ts';

/**
 * The transport a client uses when no `fetch` is injected.
 *
 * @example
 * ```ts
 * const transport = createDefaultTransport({ connections: 64 });
 * ```
 */
export function createDefaultTransport(settings: TransportSettings): Transport {
  return createUndiciTransport(settings);
}
