/** The bounded reader every transport reads answers with: whole within the bound, cancelled past it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BodySource, readBoundedBody } from './bounded-body.ts';

/** A body of the given chunks that records how many were read and whether it was cancelled. */
function source(chunks: readonly Uint8Array[]): BodySource & { reads: number; cancelled: boolean } {
  let next = 0;
  const body = {
    reads: 0,
    cancelled: false,
    async read() {
      body.reads++;
      return chunks[next++];
    },
    cancel() {
      body.cancelled = true;
    },
  };
  return body;
}

const chunkList = fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 12 });
const total = (chunks: readonly Uint8Array[]) => chunks.reduce((n, c) => n + c.byteLength, 0);

describe('readBoundedBody', () => {
  it('reads a body within the bound whole and decodes it as UTF-8, however it is cut into chunks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary' }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (text, cuts) => {
          const bytes = new TextEncoder().encode(text);
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const chunks = [0, ...points].map((from, i) => bytes.slice(from, [...points, bytes.length][i]));
          const body = source(chunks);
          const read = await readBoundedBody(body, bytes.length);
          expect(read).toEqual({ text, oversized: false });
          expect(body.cancelled).toBe(false);
        },
      ),
    );
  });

  it('stops at the first chunk past the bound, cancels the rest and keeps no text', async () => {
    await fc.assert(
      fc.asyncProperty(chunkList, fc.nat({ max: 800 }), async (chunks, max) => {
        const body = source(chunks);
        const read = await readBoundedBody(body, max);
        const size = total(chunks);
        expect(read.oversized).toBe(size > max);
        expect(body.cancelled).toBe(size > max);
        if (size > max) {
          expect(read.text).toBe('');
          // It read exactly up to the chunk that crossed the bound, never beyond.
          const sums = chunks.map((_, i) => total(chunks.slice(0, i + 1)));
          const crossing = sums.findIndex((sum) => sum > max);
          expect(body.reads).toBe(crossing + 1);
        }
      }),
    );
  });

  it('cancels a body whose Content-Length is past the bound before reading any of it', async () => {
    await fc.assert(
      fc.asyncProperty(
        chunkList,
        fc.nat({ max: 1_000 }),
        fc.nat({ max: 1_000 }),
        async (chunks, max, extra) => {
          const body = source(chunks);
          const read = await readBoundedBody(body, max, String(max + 1 + extra));
          expect(read).toEqual({ text: '', oversized: true });
          expect(body.reads).toBe(0);
          expect(body.cancelled).toBe(true);
        },
      ),
    );
  });

  it('ignores a Content-Length that is not a number and counts the bytes that come', async () => {
    const body = source([new TextEncoder().encode('{"ok":true}')]);
    await expect(readBoundedBody(body, 100, 'lots')).resolves.toEqual({
      text: '{"ok":true}',
      oversized: false,
    });
  });

  it('is oversized even when cancelling the body fails', async () => {
    const body = {
      read: async () => new Uint8Array(10),
      cancel: () => Promise.reject(new Error('already broken')),
    };
    await expect(readBoundedBody(body, 5)).resolves.toEqual({ text: '', oversized: true });
  });
});
