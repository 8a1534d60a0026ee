/**
 * @postback/fastify — click capture for Fastify 5. All logic lives in `@postback/core`; this file is a
 * Fastify plugin (wrapped with `fastify-plugin`, so its hook and `request.postback` reach every route)
 * that converts Fastify's request for `capture.handle` in an `onRequest` hook and applies the outcome
 * through `reply` (cookie, redirect) rather than Node's response, so Fastify's own header handling keeps it.
 */
import { createHmac, createSecretKey } from 'node:crypto';
import {
  type CaptureOptions,
  type CaptureOutcome,
  type ClickCapture,
  type ClickContext,
  type ConfirmOrderResult,
  confirmClickOrder,
  createClickCapture,
  nodeCryptoHmac,
  type OrderToConfirm,
  type Outbox,
  withDefaultHmac,
} from '@postback/core';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/** Signs landings synchronously: `node:crypto`'s HMAC under a key object made once per secret. */
const nodeHmac = nodeCryptoHmac({ createHmac, createSecretKey });

declare module 'fastify' {
  interface FastifyRequest {
    /** The ad click of this request; set by the `postback` plugin. `await request.postback.click()`. */
    postback: ClickContext;
  }
}

/** The plugin's options: core's capture options, whose hooks receive Fastify's `request`. */
export type PostbackPluginOptions = CaptureOptions<FastifyRequest>;

/** Options Fastify's `register` itself reads; they are not capture options. */
const REGISTER_KEYS = ['prefix', 'logLevel', 'logSerializers'] as const;

function captureOptionsOf(options: PostbackPluginOptions): PostbackPluginOptions {
  if (typeof options !== 'object' || options === null) return options;
  const own: Record<string, unknown> = { ...options };
  for (const key of REGISTER_KEYS) delete own[key];
  return own as unknown as PostbackPluginOptions;
}

const postbackPlugin: FastifyPluginCallback<PostbackPluginOptions> = (fastify, options, done) => {
  let capture: ClickCapture<FastifyRequest>;
  try {
    capture = createClickCapture<FastifyRequest>(withDefaultHmac(captureOptionsOf(options), nodeHmac));
  } catch (error) {
    // An OptionsError naming the option: Fastify rejects `ready()`/`listen()` with it.
    return done(error as Error);
  }
  fastify.decorateRequest('postback', null as unknown as ClickContext);

  const apply = (
    outcome: CaptureOutcome,
    request: FastifyRequest,
    reply: FastifyReply,
    next: (error?: Error) => void,
  ): void => {
    request.postback = outcome.postback;
    // `reply.header('set-cookie', …)` appends to the Set-Cookie values already there, and the route's
    // later `reply.header('set-cookie', …)` or @fastify/cookie's `setCookie` append to ours. Never
    // `reply.raw.setHeader`: Fastify's `writeHead` would replace it with the reply's own Set-Cookie.
    if (outcome.setCookie !== null) reply.header('set-cookie', outcome.setCookie);
    if (outcome.redirect === null) {
      next();
      return;
    }
    reply
      .code(outcome.redirect.status)
      .header('location', outcome.redirect.location)
      .header('cache-control', 'no-store')
      .send();
  };

  fastify.addHook('onRequest', (request, reply, next) => {
    const { raw } = request;
    const cookie = raw.headers.cookie;
    const outcome = capture.handle(
      {
        url: raw.url ?? '/',
        method: raw.method,
        headers: raw.headers,
        cookie: typeof cookie === 'string' ? cookie : null,
      },
      request,
    );
    // A throw while applying goes to Fastify's error handling, as it does on the synchronous path (the
    // hook runner catches it there): never to a rejection no one handles, which would end the process.
    if (outcome instanceof Promise) {
      outcome
        .then((o) => apply(o, request, reply, next))
        .catch((error: unknown) => next(error instanceof Error ? error : new Error(String(error))));
    } else apply(outcome, request, reply, next);
  });
  done();
};

/**
 * Fastify plugin that captures the ad click. Register it on the root instance (it is wrapped with
 * `fastify-plugin`, so it covers every route, whatever the prefix); read the click with
 * `await request.postback.click()` (a `{ token, clickedAt }` or null; the cookie is verified on that first
 * call). Options are core's capture options; `prefix`, `logLevel` and `logSerializers` are left to Fastify.
 *
 * @throws {OptionsError} from `app.ready()`/`app.listen()`, for invalid options (naming the option).
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { postback, confirmOrder } from '@postback/fastify';
 *
 * const app = Fastify();
 * await app.register(postback, { secrets: [process.env.POSTBACK_COOKIE_SECRET!] });
 * app.post('/orders', async (request) => {
 *   const order = await createOrder(request);
 *   const { enqueued } = await confirmOrder(request, outbox, { orderId: order.id, valueMicros: order.totalMicros });
 *   return { order, fromAd: enqueued };
 * });
 * ```
 */
export const postback = fp(postbackPlugin, { fastify: '5.x', name: '@postback/fastify' });

/**
 * Enqueues the confirmation of an order if the request carries a click (URL, cookie or store), and says
 * whether it did. `outbox` is any `Outbox` (or anything with its `confirm`, such as a transactional one).
 *
 * @throws {CaptureError} reason `not-installed` if the `postback` plugin did not run for this request.
 * @example
 * ```ts
 * const result = await confirmOrder(request, outbox, { orderId: 'ord_42', valueMicros: 12_340_000 });
 * if (result.enqueued) request.log.info({ job: result.result.job.id, duplicate: !result.result.created });
 * ```
 */
export function confirmOrder(
  request: { postback?: ClickContext | null },
  outbox: Pick<Outbox, 'confirm'>,
  order: OrderToConfirm,
): Promise<ConfirmOrderResult> {
  // The decoration is null until the plugin's onRequest hook has run for this request.
  return confirmClickOrder(request.postback ?? undefined, outbox, order, 'request.postback');
}

export type { CaptureOptions, ClickContext, ConfirmOrderResult, OrderToConfirm } from '@postback/core';
