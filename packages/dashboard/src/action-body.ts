/**
 * The body of a replay or purge: `{ "ids": [...] }`, the ids of the jobs the operator was shown. Nothing
 * else names jobs: a reason group's key would be recomputed at action time and could take in jobs that
 * died after the page was drawn, so it is refused. The body is read once with a size limit; a body a
 * framework already parsed (`express.json()`, Fastify) reaches the handler through the Node adapter.
 */
import { ClientError } from './answers.ts';

/** Most jobs one replay or purge may name. @defaultValue 1_000 */
export const MAX_ACTION_IDS = 1_000;

/** Largest request body read (a list of ids). @defaultValue 262_144 (256 KiB) */
export const MAX_BODY_BYTES = 256 * 1024;

/** Longest job id accepted. */
const MAX_ID_LENGTH = 1_024;

/** Whether `text` is well-formed Unicode (no lone surrogate). */
export const isWellFormed = (text: string): boolean => !/\p{Cs}/u.test(text);

/** Whether `text` can be a job id: not empty, at most 1,024 characters, well-formed. */
export const isJobId = (text: string): boolean =>
  text !== '' && text.length <= MAX_ID_LENGTH && isWellFormed(text);

/**
 * The request's body, at most {@link MAX_BODY_BYTES}.
 *
 * @throws {ClientError} 413 beyond the limit, 400 when the body was already read by someone else.
 */
export async function readBody(request: Request): Promise<Uint8Array> {
  if (request.bodyUsed) {
    throw new ClientError(400, 'the body was read before the dashboard saw it: pass it as req.body');
  }
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw new ClientError(413, 'the body is too large');
  if (request.body === null) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new ClientError(413, 'the body is too large');
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

const badIds = () =>
  new ClientError(
    400,
    `name the jobs: { "ids": [...] }, 1 to ${MAX_ACTION_IDS} distinct job ids (strings of well-formed Unicode)`,
  );

/**
 * The ids a replay or purge names, from its JSON body.
 *
 * @throws {ClientError} 400 for a body that is not `{ "ids": [...] }` with 1 to {@link MAX_ACTION_IDS}
 * distinct, well-formed ids (a `group` is refused: actions take the ids the page showed).
 * @example
 * ```ts
 * await actionIds(new Request(url, { method: 'POST', body: '{"ids":["42"]}' })); // ['42']
 * ```
 */
export async function actionIds(request: Request): Promise<string[]> {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await readBody(request)));
  } catch (error) {
    if (error instanceof ClientError) throw error;
    throw new ClientError(400, 'the body must be JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badIds();
  const keys = Object.keys(body);
  if (keys.includes('group')) {
    throw new ClientError(
      400,
      'a group is not accepted: send the ids of the jobs shown ({ "ids": [...] }), so nothing unseen is touched',
    );
  }
  const unknown = keys.find((k) => k !== 'ids');
  if (unknown !== undefined) throw new ClientError(400, 'unknown field in the body: only "ids" is read');
  const { ids } = body as { ids?: unknown };
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_ACTION_IDS) throw badIds();
  for (const id of ids) {
    if (typeof id !== 'string' || !isJobId(id)) throw badIds();
  }
  if (new Set(ids).size !== ids.length) throw badIds();
  return ids as string[];
}
