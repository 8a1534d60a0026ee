/**
 * Reading an answer's body up to a bound. Every transport reads through {@link readBoundedBody}: it takes
 * chunks until the body ends or its size passes the bound, and then cancels the rest (the transport's
 * `cancel` closes the stream and with it the connection), so an answer of any size costs at most the bound
 * in memory and never holds the event loop for long. A body declared larger than the bound by its
 * `Content-Length` is not read at all.
 */

/** A body being read: one chunk at a time, and a way to stop reading it. */
export interface BodySource {
  /** The next chunk, or undefined at the end of the body. */
  read(): Promise<Uint8Array | undefined>;
  /** Stops reading and releases the stream (and its connection). */
  cancel(): Promise<void> | void;
}

/** What was read: the text of a body within the bound, or `oversized` (and no text) past it. */
export interface BoundedBody {
  /** The body decoded as UTF-8 (invalid bytes replaced); empty when `oversized`. */
  text: string;
  /** The body was longer than the bound: reading stopped there and the rest was cancelled. */
  oversized: boolean;
}

/**
 * Reads `source` to its end, or until more than `maxBytes` bytes arrived (then cancels it). A
 * `declaredLength` (the `Content-Length` header) above the bound cancels before the first read.
 *
 * @example
 * ```ts
 * const reader = response.body.getReader();
 * const { text, oversized } = await readBoundedBody(
 *   { read: async () => (await reader.read()).value, cancel: () => reader.cancel() },
 *   1_048_576,
 *   response.headers.get('content-length'),
 * );
 * ```
 */
export async function readBoundedBody(
  source: BodySource,
  maxBytes: number,
  declaredLength?: string | null,
): Promise<BoundedBody> {
  const declared = declaredLength == null ? Number.NaN : Number(declaredLength);
  if (Number.isFinite(declared) && declared > maxBytes) return cancelled(source);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const chunk = await source.read();
    if (chunk === undefined) break;
    size += chunk.byteLength;
    if (size > maxBytes) return cancelled(source);
    chunks.push(chunk);
  }
  return { text: decodeUtf8(chunks, size), oversized: false };
}

async function cancelled(source: BodySource): Promise<BoundedBody> {
  // A cancel that fails (the stream already broke) changes nothing: the answer is oversized either way.
  try {
    await source.cancel();
  } catch {}
  return { text: '', oversized: true };
}

function decodeUtf8(chunks: readonly Uint8Array[], size: number): string {
  if (chunks.length === 1) return new TextDecoder().decode(chunks[0]);
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}
