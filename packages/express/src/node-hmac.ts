/**
 * HMAC-SHA256 from `node:crypto` for the click cookie. On Node it is synchronous and several times
 * cheaper per cookie than Web Crypto's (which queues each call on the thread pool); the MAC is the same,
 * so cookies stay interchangeable with edge code that signs with Web Crypto.
 */
import { createHmac } from 'node:crypto';
import type { HmacSha256 } from '@postback/core';

/**
 * The `hmac` capture option the adapter passes by default.
 *
 * @example
 * ```ts
 * const mac = nodeHmac(secret)(new TextEncoder().encode('data')); // 32-byte Buffer
 * ```
 */
export const nodeHmac: HmacSha256 = (secret) => (data) => createHmac('sha256', secret).update(data).digest();
