/**
 * @postback/hono — click capture for Hono 4, on every runtime Hono runs on (Node, Bun, Deno, Workers):
 * core's capture engine with its default Web Crypto HMAC, no `node:` import. This file converts Hono's
 * context for `capture.handle` and applies the outcome (cookie, redirect, `c.get('postback')`).
 *
 * The cookie is added after the route has answered, to whatever `Response` it returned: a route may
 * return `Response.redirect()` or a fetched response, whose headers are immutable (appending to them
 * throws `TypeError: immutable`), so such a response is copied first. Adding it before `next()` with
 * `c.header()` is not enough either: Hono drops prepared headers when a route returns its own `Response`.
 */
import {
  type CaptureOptions,
  type ClickContext,
  type ConfirmOrderResult,
  confirmClickOrder,
  createClickCapture,
  type OrderToConfirm,
  type Outbox,
} from '@postback/core';
import type { Context, MiddlewareHandler } from 'hono';

/** The variables the middleware sets; `c.get('postback')` and `c.var.postback` are typed with them. */
export interface PostbackVariables {
  /** The ad click of this request: `await c.get('postback').click()`. */
  postback: ClickContext;
}

/** The Hono environment the middleware adds to: `new Hono<PostbackEnv>()`, or merge it into your own. */
export interface PostbackEnv {
  Variables: PostbackVariables;
}

/**
 * Puts `setCookie` first among the response's `Set-Cookie` values (the app's own come after it, so a
 * cookie of the same name the route sets wins in the browser), copying a response whose headers are
 * immutable (`Response.redirect()`, a fetched response).
 */
function withClickCookie(response: Response, setCookie: string): Response {
  let target = response;
  const theirs = response.headers.getSetCookie();
  try {
    response.headers.delete('set-cookie');
  } catch {
    target = new Response(response.body, response);
    target.headers.delete('set-cookie');
  }
  target.headers.append('set-cookie', setCookie);
  for (const cookie of theirs) target.headers.append('set-cookie', cookie);
  return target;
}

/**
 * Hono middleware that captures the ad click. Put it before your routes (`app.use(postback(...))`); read
 * the click with `await c.get('postback').click()` (a `{ token, clickedAt }` or null; the cookie is
 * verified on that first call). The option hooks (`consent`, `key`, `onInvalid`, `onError`) receive `c`.
 *
 * @throws {OptionsError} at once, for invalid options (naming the option).
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { confirmOrder, postback, type PostbackEnv } from '@postback/hono';
 *
 * const app = new Hono<PostbackEnv>();
 * app.use(postback({ secrets: [env.POSTBACK_COOKIE_SECRET] }));
 * app.get('/', async (c) => c.text((await c.get('postback').click()) ? 'Welcome, ad visitor' : 'Welcome'));
 * app.post('/orders', async (c) => {
 *   const order = await createOrder(c);
 *   const { enqueued } = await confirmOrder(c, outbox, { orderId: order.id, valueMicros: order.totalMicros });
 *   return c.json({ order, fromAd: enqueued });
 * });
 * ```
 */
export function postback(options: CaptureOptions<Context>): MiddlewareHandler<PostbackEnv> {
  const capture = createClickCapture<Context>(options);
  return async function postbackMiddleware(c, next) {
    const outcome = await capture.handle(c.req.raw, c);
    c.set('postback', outcome.postback);
    if (outcome.redirect !== null) {
      const headers: Record<string, string> = {
        location: outcome.redirect.location,
        'cache-control': 'no-store',
      };
      if (outcome.setCookie !== null) headers['set-cookie'] = outcome.setCookie;
      return c.body(null, outcome.redirect.status, headers);
    }
    await next();
    if (outcome.setCookie !== null) {
      const response = withClickCookie(c.res, outcome.setCookie);
      if (response !== c.res) {
        // Hono's `res` setter merges the previous response's headers into a new one; clear it first.
        c.res = undefined;
        c.res = response;
      }
    }
  };
}

/**
 * Enqueues the confirmation of an order if the request carries a click (URL, cookie or store), and says
 * whether it did. `outbox` is any `Outbox` (or anything with its `confirm`, such as a transactional one).
 *
 * @throws {CaptureError} reason `not-installed` if `postback()` did not run for this request.
 * @example
 * ```ts
 * app.post('/orders', async (c) => {
 *   const result = await confirmOrder(c, outbox, { orderId: 'ord_42', valueMicros: 12_340_000 });
 *   return c.json({ fromAd: result.enqueued });
 * });
 * ```
 */
export function confirmOrder(
  c: Context,
  outbox: Pick<Outbox, 'confirm'>,
  order: OrderToConfirm,
): Promise<ConfirmOrderResult> {
  return confirmClickOrder(
    (c.var as Partial<PostbackVariables>).postback,
    outbox,
    order,
    "c.get('postback')",
  );
}

export type { CaptureOptions, ClickContext, ConfirmOrderResult, OrderToConfirm } from '@postback/core';
