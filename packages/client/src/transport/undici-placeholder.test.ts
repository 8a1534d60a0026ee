/**
 * Bun answers `import 'undici'` with a placeholder: its `Pool` has a `request` that returns nothing and no
 * `close`. The undici transport must say so as a configuration error before sending, and `close()` must
 * not throw. This file stands that placeholder in for the real undici (the real Bun run is in
 * `test/runtimes/bun.test.ts`).
 */
import { describe, expect, it, vi } from 'vitest';
import { createClient, TransportUnavailableError } from '../index.ts';

vi.mock('undici', () => ({
  // Bun 1.x: `class Pool { request() {} }` (see bun's src/js/thirdparty/undici.js).
  Pool: class Pool {
    request(): undefined {
      return undefined;
    }
  },
}));

describe('the undici transport on a placeholder undici', () => {
  it('throws TransportUnavailableError naming what is missing, before sending', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'pbsk_test_key_000000' });
    expect(client.transport).toBe('undici');
    const error = await client.conversions
      .confirm({ click_token: 'tok_abcdefghijklmnop', order_id: 'ord_1', value_micros: 1 })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TransportUnavailableError);
    expect(error).toMatchObject({ code: 'transport_unavailable', retryable: false, maybeSent: false });
    expect((error as Error).message).toContain('undici Pool has no close() (not the real undici)');
    await expect(client.close()).resolves.toBeUndefined();
  });
});
