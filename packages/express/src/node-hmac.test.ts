/** The node:crypto HMAC the adapter signs with computes exactly Web Crypto's HMAC-SHA256. */
import { type CaptureOutcome, createClickCapture, webCryptoHmac } from '@postback/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeHmac } from './node-hmac.ts';

describe('node:crypto HMAC', () => {
  it('gives the same MAC as Web Crypto for any secret and data, so cookies move between edge and Node', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 32, maxLength: 80 }),
        fc.uint8Array({ maxLength: 600 }),
        async (secret, data) => {
          const fromNode = await nodeHmac(secret)(data);
          expect(Buffer.from(fromNode).equals(Buffer.from(await webCryptoHmac(secret)(data)))).toBe(true);
          expect(fromNode).toHaveLength(32);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('lets a landing complete synchronously, so the app runs without waiting for a promise', async () => {
    const capture = createClickCapture({
      secrets: ['sync-secret-0123456789-abcdefghijklmn'],
      hmac: nodeHmac,
    });
    const request = { url: '/?click_token=tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd', headers: {} };
    const outcome = capture.handle(request, request);
    expect(outcome).not.toBeInstanceOf(Promise);
    expect((outcome as CaptureOutcome).setCookie).toMatch(/^postback_click=/);
    expect(await (outcome as CaptureOutcome).postback.click()).toMatchObject({
      token: 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd',
    });
  });
});
