/**
 * @postback/koa — click capture for Koa 2 and 3. All logic lives in `@postback/core`; this file converts
 * Koa's context for `capture.handle` and applies the outcome (cookie, redirect, `ctx.state.postback`).
 * Koa is a peer dependency and is only described structurally here.
 */
import { createHmac, createSecretKey } from 'node:crypto';
import {
  appendSetCookie,
  type CaptureOptions,
  type CaptureOutcome,
  type ClickContext,
  type ConfirmOrderResult,
  confirmClickOrder,
  createClickCapture,
  nodeCryptoHmac,
  type OrderToConfirm,
  type Outbox,
  type SetCookieTarget,
  withDefaultHmac,
} from '@postback/core';

/** Signs landings synchronously: `node:crypto`'s HMAC under a key object made once per secret. */
const nodeHmac = nodeCryptoHmac({ createHmac, createSecretKey });

/** What the middleware needs of Koa's `ctx`. */
export interface KoaContextLike {
  originalUrl: string;
  /**
   * Node's request: the method and headers are read from it directly. Koa's `ctx.method` and
   * `ctx.headers` hold the same values behind two getters each (~400 instructions per read, measured).
   */
  req: {
    method?: string | undefined;
    headers: Readonly<Record<string, string | string[] | undefined>>;
  };
  // biome-ignore lint/suspicious/noExplicitAny: Koa's own state type is `any`-keyed.
  state: any;
  status: number;
  set(field: string, value: string): void;
  /** Node's response: the cookie is appended with `getHeader`/`setHeader` directly. */
  res: SetCookieTarget;
}

/** The state the middleware adds; type your app with it: `new Koa<PostbackState>()`. */
export interface PostbackState {
  /** The ad click of this request: `await ctx.state.postback.click()`. */
  postback: ClickContext;
}

/**
 * Koa middleware that captures the ad click. Put it before your routes; read the click with
 * `await ctx.state.postback.click()` (a `{ token, clickedAt }` or null; the cookie is verified on that
 * first call).
 *
 * @throws {OptionsError} at once, for invalid options (naming the option).
 * @example
 * ```ts
 * import Koa from 'koa';
 * import { postback, confirmOrder, type PostbackState } from '@postback/koa';
 *
 * const app = new Koa<PostbackState>();
 * app.use(postback({ secrets: [process.env.POSTBACK_COOKIE_SECRET!] }));
 * app.use(async (ctx) => {
 *   ctx.body = { click: await ctx.state.postback.click() };
 * });
 * ```
 */
export function postback<Ctx extends KoaContextLike = KoaContextLike>(options: CaptureOptions<Ctx>) {
  const capture = createClickCapture<Ctx>(withDefaultHmac(options, nodeHmac));
  const apply = (outcome: CaptureOutcome, ctx: Ctx, next: () => Promise<unknown>): Promise<unknown> => {
    ctx.state.postback = outcome.postback;
    if (outcome.setCookie !== null) appendSetCookie(ctx.res, outcome.setCookie);
    if (outcome.redirect === null) return next();
    ctx.status = outcome.redirect.status;
    ctx.set('Location', outcome.redirect.location);
    ctx.set('Cache-Control', 'no-store');
    return Promise.resolve();
  };
  // Not an `async` function: a request that needs no awaiting (most) costs no extra promise.
  return function postbackMiddleware(ctx: Ctx, next: () => Promise<unknown>): Promise<unknown> {
    const { headers, method } = ctx.req;
    const cookie = headers.cookie;
    const outcome = capture.handle(
      {
        url: ctx.originalUrl,
        method,
        headers,
        cookie: typeof cookie === 'string' ? cookie : null,
      },
      ctx,
    );
    return outcome instanceof Promise
      ? outcome.then((done) => apply(done, ctx, next))
      : apply(outcome, ctx, next);
  };
}

/**
 * Enqueues the confirmation of an order if the request carries a click (URL, cookie or store), and says
 * whether it did. `outbox` is any `Outbox` (or anything with its `confirm`, such as a transactional one).
 *
 * @throws {CaptureError} reason `not-installed` if `postback()` did not run for this request.
 * @example
 * ```ts
 * router.post('/orders', async (ctx) => {
 *   const order = await createOrder(ctx);
 *   const result = await confirmOrder(ctx, outbox, { orderId: order.id, valueMicros: order.totalMicros });
 *   ctx.body = { order, fromAd: result.enqueued };
 * });
 * ```
 */
export function confirmOrder(
  // biome-ignore lint/suspicious/noExplicitAny: accepts any Koa context, whatever its state type.
  ctx: { state: any },
  outbox: Pick<Outbox, 'confirm'>,
  order: OrderToConfirm,
): Promise<ConfirmOrderResult> {
  return confirmClickOrder(
    (ctx.state as Partial<PostbackState> | undefined)?.postback,
    outbox,
    order,
    'ctx.state.postback',
  );
}

export type { CaptureOptions, ClickContext, ConfirmOrderResult, OrderToConfirm } from '@postback/core';
