/**
 * Capture for Fetch API servers (Hono, Bun, Deno, Cloudflare Workers, any `Request → Response` handler):
 * wrap the handler, and it receives the click as its second argument.
 */
import { type ClickContext, createClickCapture } from './engine.ts';
import type { CaptureOptions } from './options.ts';

/** A Fetch handler that also receives the request's click; `rest` are the platform's extra arguments (env, ctx, server). */
export type PostbackFetchHandler<A extends unknown[]> = (
  request: Request,
  postback: ClickContext,
  ...rest: A
) => Response | Promise<Response>;

function withCookie(response: Response, setCookie: string): Response {
  try {
    response.headers.append('set-cookie', setCookie);
    return response;
  } catch {
    // Headers of Response.redirect() and of fetched responses are immutable: copy them.
    const copy = new Response(response.body, response);
    copy.headers.append('set-cookie', setCookie);
    return copy;
  }
}

/**
 * Wraps a Fetch API handler with click capture: a landing request gets the signed cookie (or the clean-URL
 * redirect), and the handler reads the click with `await postback.click()`.
 *
 * @example
 * ```ts
 * // Cloudflare Workers / Bun / Deno: extra platform arguments pass through after `postback`.
 * export default {
 *   fetch: withPostback(async (request, postback, env) => {
 *     const click = await postback.click(); // { token, clickedAt } | null
 *     return new Response(click ? 'from an ad' : 'hello');
 *   }, { secrets: [SECRET] }),
 * };
 * ```
 */
export function withPostback<A extends unknown[]>(
  handler: PostbackFetchHandler<A>,
  options: CaptureOptions<Request>,
): (request: Request, ...rest: A) => Promise<Response> {
  const capture = createClickCapture<Request>(options);
  return async (request, ...rest) => {
    const outcome = await capture.handle(request, request);
    if (outcome.redirect !== null) {
      const headers = new Headers({ location: outcome.redirect.location, 'cache-control': 'no-store' });
      if (outcome.setCookie !== null) headers.append('set-cookie', outcome.setCookie);
      return new Response(null, { status: outcome.redirect.status, headers });
    }
    const response = await handler(request, outcome.postback, ...rest);
    return outcome.setCookie === null ? response : withCookie(response, outcome.setCookie);
  };
}
