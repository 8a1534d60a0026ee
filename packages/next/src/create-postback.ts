/**
 * The Next.js adapter: one configured capture shared by the proxy (`proxy.ts`, or `middleware.ts` in
 * Next 15) and the readers used in route handlers, server actions and Pages API routes. All logic lives in
 * `@postback/core`; this file converts Next's request shapes and applies the outcome to a `NextResponse`.
 */
import {
  type CaptureOptions,
  type ClickContext,
  type ClickStamp,
  type ConfirmOrderResult,
  confirmClickOrder,
  createClickCapture,
  nodeCryptoHmac,
  type OrderToConfirm,
  type Outbox,
  withDefaultHmac,
} from '@postback/core';
import { headers as nextHeaders } from 'next/headers.js';
import type { NextRequest } from 'next/server.js';
import { NextResponse } from 'next/server.js';
import { mergedCookieHeader, POSTBACK_CLICK_HEADER, signedValueOf } from './forwarded-click.ts';

/**
 * Options of the Next.js adapter: core's capture options. The hooks (`consent`, `key`, `onInvalid`,
 * `onError`) receive a Fetch `Request` — the `NextRequest` in the proxy, the handler's request (or one
 * built from its headers) on the route side.
 */
export type NextPostbackOptions = CaptureOptions<Request>;

/** A Pages Router API request (`NextApiRequest`, an `http.IncomingMessage`), described structurally. */
export interface ApiRequestLike {
  url?: string | undefined;
  method?: string | undefined;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** A Fetch `Request` (a route handler's `request`, a `NextRequest`), a Pages API `req`, or nothing (use `headers()`). */
export type ClickSource = Request | ApiRequestLike | undefined;

/** The proxy function: export it from `proxy.ts` (Next 16) or as `middleware` from `middleware.ts` (Next 15). */
export type PostbackProxy = (request: NextRequest) => NextResponse | Promise<NextResponse>;

/** What {@link createPostback} returns: the proxy and the readers bound to the same options. */
export interface NextPostback {
  /** Captures the click; export it from `proxy.ts` (`export const proxy = postback.proxy`). */
  proxy: PostbackProxy;
  /** The same function, for `middleware.ts` (Next 15, or the Edge runtime in 16). */
  middleware: PostbackProxy;
  /** The click of the current request in a route handler, server component or server action (`headers()`). */
  getClick(): Promise<ClickStamp | null>;
  /** The click of a route handler's `request` (or any Fetch `Request`). */
  getClickFromRequest(request: Request): Promise<ClickStamp | null>;
  /** The click of a Pages Router API route's `req`. */
  getClickFromApiRequest(req: ApiRequestLike): Promise<ClickStamp | null>;
  /**
   * Enqueues the confirmation of an order if the request has a click (see core's `confirmClickOrder`).
   * `source` is the handler's `request`, a Pages API `req`, or `undefined` to read `headers()`.
   */
  confirmOrder(
    source: ClickSource,
    outbox: Pick<Outbox, 'confirm'>,
    order: OrderToConfirm,
  ): Promise<ConfirmOrderResult>;
}

/**
 * `node:crypto` where the runtime has it (Node.js: `proxy.ts`, route handlers), loaded without a static
 * import, which the Edge runtime would refuse. There, core's Web Crypto signs instead.
 */
function loadNodeCrypto(): typeof import('node:crypto') | undefined {
  try {
    return (
      globalThis as { process?: { getBuiltinModule?(id: 'node:crypto'): typeof import('node:crypto') } }
    ).process?.getBuiltinModule?.('node:crypto');
  } catch {
    // Next 15's Edge sandbox (webpack build) throws on merely reading a Node.js API it lacks.
    return undefined;
  }
}

const nodeCrypto = loadNodeCrypto();

/** Synchronous landings on Node (`node:crypto`'s HMAC, a key object made once per secret); Web Crypto on the edge. */
const withPlatformHmac = (options: NextPostbackOptions): NextPostbackOptions =>
  nodeCrypto === undefined ? options : withDefaultHmac(options, nodeCryptoHmac(nodeCrypto));

const isFetchRequest = (source: Request | ApiRequestLike): source is Request =>
  typeof (source.headers as { get?: unknown }).get === 'function';

function headersOfApiRequest(req: ApiRequestLike): Headers {
  const result = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    try {
      // Node joins repeated cookie headers with '; ', every other list with ', '.
      result.set(name, Array.isArray(value) ? value.join(name === 'cookie' ? '; ' : ', ') : value);
    } catch {
      // A header Fetch refuses cannot matter to the click; the hooks get the rest.
    }
  }
  return result;
}

/**
 * The URL of the `Request` a Pages API `req` is handed to the hooks as. The click never depends on it
 * (the route side reads only headers), and `req.url` is what the client sent: one no URL parser takes
 * (`//[`) becomes the site's root rather than an error in the app's route.
 */
function hookUrlOf(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://localhost');
  } catch {
    return new URL('http://localhost/');
  }
}

/**
 * The options, or a function giving them. A function is called (and its result validated) on the first
 * use of the adapter — the first request — not when the module loads, so `next build`, which loads
 * the route modules to collect page data, needs no secret in its environment.
 */
export type NextPostbackOptionsSource = NextPostbackOptions | (() => NextPostbackOptions);

/**
 * Creates the adapter once per app (in a module both `proxy.ts` and your routes import). Give the
 * options as a function to read the environment on first use (the first request): `next build` loads
 * that module without the run-time secret. Options given as an object are validated at once.
 *
 * @throws {OptionsError} for invalid options, naming the option: at once for an object, on each use
 * (the proxy or a reader) while a function gives invalid ones.
 * @example
 * ```ts
 * // lib/postback.ts
 * import { createPostback } from '@postback/next';
 * export const postback = createPostback(() => ({ secrets: [process.env.POSTBACK_SECRET!] }));
 *
 * // proxy.ts (Next 16) — or middleware.ts with `export const middleware = postback.middleware` (Next 15)
 * import { postback } from './lib/postback';
 * export const proxy = postback.proxy;
 *
 * // app/orders/route.ts
 * export async function POST(request: Request) {
 *   const order = await createOrder(await request.json());
 *   const { enqueued } = await postback.confirmOrder(request, outbox, { orderId: order.id, valueMicros: order.totalMicros });
 *   return Response.json({ order_id: order.id, attributed: enqueued }, { status: 201 });
 * }
 * ```
 */
export function createPostback(options: NextPostbackOptionsSource): NextPostback {
  if (typeof options !== 'function') return createBoundPostback(options);
  let bound: NextPostback | undefined;
  // Not cached on failure: every use reports the bad option until the environment is fixed.
  const adapter = (): NextPostback => (bound ??= createBoundPostback(options()));
  const proxy: PostbackProxy = (request) => adapter().proxy(request);
  return {
    proxy,
    middleware: proxy,
    // async, so that invalid options reject like any other failure of a reader.
    getClick: async () => adapter().getClick(),
    getClickFromRequest: async (request) => adapter().getClickFromRequest(request),
    getClickFromApiRequest: async (req) => adapter().getClickFromApiRequest(req),
    confirmOrder: async (source, outbox, order) => adapter().confirmOrder(source, outbox, order),
  };
}

function createBoundPostback(options: NextPostbackOptions): NextPostback {
  const capture = createClickCapture<Request>(withPlatformHmac(options));
  const { cookieName } = capture.settings;

  const apply = (outcome: Awaited<ReturnType<typeof capture.handle>>, request: NextRequest): NextResponse => {
    if (outcome.redirect !== null) {
      const response = NextResponse.redirect(
        new URL(outcome.redirect.location, request.url),
        outcome.redirect.status,
      );
      response.headers.set('cache-control', 'no-store');
      if (outcome.setCookie !== null) response.headers.append('set-cookie', outcome.setCookie);
      return response;
    }
    const forwarded = outcome.setCookie === null ? null : signedValueOf(outcome.setCookie);
    let response: NextResponse;
    if (forwarded !== null || request.headers.has(POSTBACK_CLICK_HEADER)) {
      // Only the proxy may set the header: a client's own is dropped (it would be verified anyway).
      const requestHeaders = new Headers(request.headers);
      requestHeaders.delete(POSTBACK_CLICK_HEADER);
      if (forwarded !== null) requestHeaders.set(POSTBACK_CLICK_HEADER, forwarded);
      response = NextResponse.next({ request: { headers: requestHeaders } });
    } else {
      response = NextResponse.next();
    }
    if (outcome.setCookie !== null) response.headers.append('set-cookie', outcome.setCookie);
    return response;
  };

  const proxy: PostbackProxy = (request) => {
    const outcome = capture.handle(request, request);
    return outcome instanceof Promise
      ? outcome.then((done) => apply(done, request))
      : apply(outcome, request);
  };

  // The route side never re-reads the URL's token (the proxy did, and stamped it): it verifies the
  // forwarded value and the cookies, and asks the store when one is configured.
  const contextOf = (headers: Headers, context: Request): ClickContext => {
    const cookie = mergedCookieHeader(headers.get(POSTBACK_CLICK_HEADER), headers.get('cookie'), cookieName);
    const outcome = capture.handle({ url: '/', headers: cookie === undefined ? {} : { cookie } }, context);
    // A URL without a token makes `handle` synchronous.
    return (outcome as Awaited<typeof outcome>).postback;
  };

  const contextOfSource = async (source: ClickSource): Promise<ClickContext> => {
    if (source === undefined) {
      const headers = new Headers(await nextHeaders());
      return contextOf(headers, new Request('http://localhost/', { headers }));
    }
    if (isFetchRequest(source)) return contextOf(source.headers, source);
    const headers = headersOfApiRequest(source);
    return contextOf(headers, new Request(hookUrlOf(source.url), { headers }));
  };

  return {
    proxy,
    middleware: proxy,
    getClick: async () => (await contextOfSource(undefined)).click(),
    getClickFromRequest: async (request) => (await contextOfSource(request)).click(),
    getClickFromApiRequest: async (req) => (await contextOfSource(req)).click(),
    confirmOrder: async (source, outbox, order) =>
      confirmClickOrder(await contextOfSource(source), outbox, order, 'the click of this request'),
  };
}

/**
 * Just the proxy, for apps that read the click elsewhere with their own {@link createPostback}.
 *
 * @example
 * ```ts
 * // proxy.ts
 * import { createPostbackProxy } from '@postback/next';
 * export const proxy = createPostbackProxy(() => ({ secrets: [process.env.POSTBACK_SECRET!] }));
 * export const config = { matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'] };
 * ```
 */
export function createPostbackProxy(options: NextPostbackOptionsSource): PostbackProxy {
  return createPostback(options).proxy;
}
