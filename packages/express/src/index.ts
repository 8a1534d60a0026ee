/**
 * @postback/express — click capture for Express 4 and 5. All logic lives in `@postback/core`; this file
 * converts Express's request for `capture.handle` and applies the outcome (cookie, redirect, `req.postback`).
 * Express is a peer dependency and is only described structurally here.
 */
import { createHmac, createSecretKey } from 'node:crypto';
import {
  appendSetCookie,
  type CaptureOptions,
  type ClickContext,
  type ConfirmOrderResult,
  confirmClickOrder,
  createClickCapture,
  nodeCryptoHmac,
  type OrderToConfirm,
  type Outbox,
  withDefaultHmac,
} from '@postback/core';

/** Signs landings synchronously: `node:crypto`'s HMAC under a key object made once per secret. */
const nodeHmac = nodeCryptoHmac({ createHmac, createSecretKey });

/** What the middleware needs of Express's `req` (an `http.IncomingMessage` with `originalUrl`). */
export interface ExpressRequestLike {
  originalUrl?: string;
  url?: string;
  method?: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  postback?: ClickContext;
}

/** Node joins repeated `Cookie` headers into one string; anything else means none. */
const cookieOf = (headers: ExpressRequestLike['headers']): string | null => {
  const cookie = headers.cookie;
  return typeof cookie === 'string' ? cookie : null;
};

/** What the middleware needs of Express's `res` (an `http.ServerResponse`). */
export interface ExpressResponseLike {
  statusCode: number;
  getHeader(name: string): number | string | readonly string[] | undefined;
  setHeader(name: string, value: string | readonly string[]): unknown;
  end(): unknown;
}

declare global {
  // Express's own augmentation point (as passport's `req.user`); no import of express needed.
  namespace Express {
    interface Request {
      /** The ad click of this request; set by the `postback()` middleware. `await req.postback.click()`. */
      postback: ClickContext;
    }
  }
}

/**
 * Express middleware that captures the ad click. Put it before your routes; read the click with
 * `await req.postback.click()` (a `{ token, clickedAt }` or null; the cookie is verified on that first call).
 *
 * @throws {OptionsError} at once, for invalid options (naming the option).
 * @example
 * ```ts
 * import express from 'express';
 * import { postback, confirmOrder } from '@postback/express';
 *
 * const app = express();
 * app.use(postback({ secrets: [process.env.POSTBACK_COOKIE_SECRET!] }));
 * app.post('/orders', async (req, res) => {
 *   const order = await createOrder(req);
 *   const { enqueued } = await confirmOrder(req, outbox, { orderId: order.id, valueMicros: order.totalMicros });
 *   res.json({ order, fromAd: enqueued });
 * });
 * ```
 */
export function postback<Req extends ExpressRequestLike = ExpressRequestLike>(options: CaptureOptions<Req>) {
  const capture = createClickCapture<Req>(withDefaultHmac(options, nodeHmac));
  const apply = (
    outcome: Awaited<ReturnType<typeof capture.handle>>,
    req: Req,
    res: ExpressResponseLike,
    next: (error?: unknown) => void,
  ) => {
    req.postback = outcome.postback;
    if (outcome.setCookie !== null) appendSetCookie(res, outcome.setCookie);
    if (outcome.redirect === null) return next();
    res.statusCode = outcome.redirect.status;
    res.setHeader('location', outcome.redirect.location);
    res.setHeader('cache-control', 'no-store');
    res.end();
  };
  return function postbackMiddleware(
    req: Req,
    res: ExpressResponseLike,
    next: (error?: unknown) => void,
  ): void {
    const outcome = capture.handle(
      {
        url: req.originalUrl ?? req.url ?? '/',
        method: req.method,
        headers: req.headers,
        cookie: cookieOf(req.headers),
      },
      req,
    );
    // A throw while applying (a cookie set on an answer a timeout already sent, …) goes to Express's
    // error handling, as it does on the synchronous path: never to a rejection no one handles, which
    // would end the host process.
    if (outcome instanceof Promise) outcome.then((done) => apply(done, req, res, next)).catch(next);
    else apply(outcome, req, res, next);
  };
}

/**
 * Enqueues the confirmation of an order if the request carries a click (URL, cookie or store), and says
 * whether it did. `outbox` is any `Outbox` (or anything with its `confirm`, such as a transactional one).
 *
 * @throws {CaptureError} reason `not-installed` if `postback()` did not run for this request.
 * @example
 * ```ts
 * const result = await confirmOrder(req, outbox, { orderId: 'ord_42', valueMicros: 12_340_000 });
 * if (result.enqueued) log.info({ job: result.result.job.id, duplicate: !result.result.created });
 * ```
 */
export function confirmOrder(
  req: { postback?: ClickContext },
  outbox: Pick<Outbox, 'confirm'>,
  order: OrderToConfirm,
): Promise<ConfirmOrderResult> {
  return confirmClickOrder(req.postback, outbox, order, 'req.postback');
}

export type { CaptureOptions, ClickContext, ConfirmOrderResult, OrderToConfirm } from '@postback/core';
