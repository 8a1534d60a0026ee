/** Reading an order body: JSON of at most 16 KiB, anything else reads as `undefined` (a 400 in the kit). */

const MAX_BODY_BYTES = 16 * 1024;

/**
 * The request's JSON body, or `undefined` when it is too large or not JSON.
 *
 * @example
 * ```ts
 * const body = await jsonBody(request);
 * ```
 */
export async function jsonBody(request: Request): Promise<unknown> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > MAX_BODY_BYTES) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}
