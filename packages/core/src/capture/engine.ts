/**
 * The capture engine: one call per request, `capture.handle(request, context)`, which returns what the
 * adapter must do (set a cookie, answer with a redirect) and the request's lazily resolved click.
 *
 * Cost by kind of request, cheapest first (the bench measures these):
 * - no token in the URL, no click cookie, no store: two string searches and a shared constant result;
 *   synchronous, nothing allocated.
 * - a click cookie but no token: a small lazy object; the HMAC is verified only if the app reads the click.
 * - a landing (valid token in the URL): sign, `Set-Cookie`, optional redirect — synchronous with a
 *   synchronous HMAC and neither `consent` nor `store` nor first-click attribution; async otherwise.
 * - a landing whose URL is opened again (a click cookie with the same token): the cookie is verified and
 *   the click keeps its first time; the cookie is not re-issued.
 */
import type { ClickStamp } from '../click.ts';
import { cleanUrlLocation } from './clean-url.ts';
import { createClickCookieCodec } from './cookie-codec.ts';
import { cookieHeaderOf, cookieValues, serializeCookie } from './cookie-header.ts';
import {
  type CaptureOptions,
  type CaptureRequest,
  type ResolvedCaptureOptions,
  resolveCaptureOptions,
} from './options.ts';
import { checkStoredClick } from './store-check.ts';
import { checkClickToken, findLandingToken, findTokens, reportedValue } from './token.ts';

/**
 * The click of one request, attached by every adapter (`req.postback`, `ctx.state.postback`, the second
 * argument of a `withPostback` handler).
 */
export interface ClickContext {
  /**
   * The click this request is attributed to, or null. Sources: the token in this request's URL, the
   * signed cookie, the store (by `key`), chosen by `attribution`. Resolved on the first call (the cookie's
   * signature is checked only then) and memoised; never rejects. Without consent it still answers (the
   * click serves this request), but nothing keeps it and `confirmOrder` enqueues nothing.
   */
  click(): Promise<ClickStamp | null>;
  /**
   * The click the shopper already held before this request: the signed cookie their browser sent, or the
   * click the store keeps under their `key` (read before this request's landing, if it is one); never a
   * token in this request's URL, which anyone can write (tokens travel in landing URLs, referrers and
   * logs). What a route acting for the shopper on their past orders uses (a consent withdrawal). Memoised;
   * never rejects. Optional for contexts made by hand: `keptClickOf` then answers null.
   */
  keptClick?(): Promise<ClickStamp | null>;
  /**
   * Whether this request's `consent` hook allows keeping the click and confirming an order from it (true
   * when no hook is configured; false when the hook throws). Resolved on the first call and memoised;
   * never rejects. Optional for contexts made by hand: `confirmOrder` treats one without it as consent
   * given.
   */
  consent?(): Promise<boolean>;
}

/** The clean-URL redirect the adapter must answer with instead of calling the app. */
export interface CaptureRedirect {
  status: 302 | 303;
  /**
   * The request's path and query without the token parameter(s), always as a path on the shop's own
   * origin (one leading `/`, never `//` or `/\`), whatever the request target: see {@link cleanUrlLocation}.
   */
  location: string;
}

/** What {@link ClickCapture.handle} tells the adapter to do. */
export interface CaptureOutcome {
  /** Put this on the request for the app. */
  postback: ClickContext;
  /** A `Set-Cookie` header value to append to the response, or null. */
  setCookie: string | null;
  /** When set, answer with this redirect (append `setCookie` to it, add `Cache-Control: no-store`). */
  redirect: CaptureRedirect | null;
}

/** A configured capture engine. Holds no secret in any enumerable property. */
export interface ClickCapture<R = CaptureRequest> {
  /**
   * Captures the click of one request. Synchronous when the URL carries no token (most requests), and
   * for landings when nothing needs awaiting; a promise otherwise. Never throws or rejects because of
   * request data.
   *
   * @param request the URL, method and headers (a Fetch `Request` fits as it is).
   * @param context what the option hooks (`consent`, `key`, `onInvalid`, `onError`) receive: the framework's request.
   */
  handle(request: CaptureRequest, context: R): CaptureOutcome | Promise<CaptureOutcome>;
  /** The parameter names, cookie name and windows in effect (no secrets). */
  readonly settings: Readonly<Omit<ResolvedCaptureOptions<R>, 'secrets'>>;
}

/**
 * The most values of the token parameter(s), and the most click cookies, one request gets looked at (and
 * reported to `onInvalid`). A landing URL holds one token, and a browser sends one click cookie (a few
 * when paths or domains differ); a request with hundreds is made by hand, and each would cost a report
 * (and a cookie an HMAC).
 */
const MAX_VALUES_PER_REQUEST = 4;
/** Reported values are cut to this many UTF-16 units. */
const MAX_REPORTED_CHARS = 256;
/** Characters of a cookie value before its token: 52 of base64url, then the dot. */
const COOKIE_HEAD_CHARS = 53;
const NULL_CLICK: Promise<ClickStamp | null> = Promise.resolve(null);
const GIVEN: Promise<boolean> = Promise.resolve(true);
const REFUSED: Promise<boolean> = Promise.resolve(false);
const ALLOWED = (): Promise<boolean> => GIVEN;
const NO_CLICK: ClickContext = Object.freeze({
  click: () => NULL_CLICK,
  keptClick: () => NULL_CLICK,
  consent: ALLOWED,
});

/**
 * The click a request's shopper already held (their signed cookie or the click store: `keptClick`), never
 * a token of the request's URL; null when there is none or the context has no `keptClick`.
 *
 * @example
 * ```ts
 * const click = await keptClickOf(req.postback); // a withdrawal route: the shopper's own click only
 * ```
 */
export function keptClickOf(context: ClickContext | undefined): Promise<ClickStamp | null> {
  return typeof context?.keptClick === 'function' ? context.keptClick() : NULL_CLICK;
}
const NOTHING: CaptureOutcome = Object.freeze({ postback: NO_CLICK, setCookie: null, redirect: null });

/**
 * Creates the capture engine; adapters call it once per app. Validates options at once.
 *
 * @throws {OptionsError} naming the option (`field`); never echoes a secret.
 * @example
 * ```ts
 * // Edge middleware (Next.js, Workers): a Fetch Request is a CaptureRequest.
 * const capture = createClickCapture<Request>({ secrets: [env.POSTBACK_COOKIE_SECRET] });
 * const outcome = await capture.handle(request, request);
 * const response = outcome.redirect
 *   ? new Response(null, { status: outcome.redirect.status, headers: { location: outcome.redirect.location } })
 *   : await fetch(request);
 * if (outcome.setCookie) response.headers.append('set-cookie', outcome.setCookie);
 * const click = await outcome.postback.click(); // { token, clickedAt } | null
 * ```
 */
export function createClickCapture<R = CaptureRequest>(options: CaptureOptions<R>): ClickCapture<R> {
  const resolved = resolveCaptureOptions(options);
  const { params, cookieName, attribution, confirmWindowMs, store, now, onError } = resolved;
  const codec = createClickCookieCodec(resolved);
  const needles = params.map((param) => `${param}=`);
  const cookieNeedle = `${cookieName}=`;

  const report = (fn: () => void): void => {
    try {
      fn();
    } catch {
      // A throwing hook must not turn a landing into an error page.
    }
  };
  const fail = (error: unknown, context: R): void => report(() => onError(error, context));

  /** `landed`, with the earlier time of `kept` when that holds the same token. */
  const firstSeen = (landed: ClickStamp, kept: ClickStamp | null): ClickStamp =>
    kept !== null && kept.token === landed.token && kept.clickedAt < landed.clickedAt
      ? { token: landed.token, clickedAt: kept.clickedAt }
      : landed;
  const sameClick = (a: ClickStamp | null, b: ClickStamp): boolean =>
    a !== null && a.token === b.token && a.clickedAt === b.clickedAt;

  const pick = (a: ClickStamp | null, b: ClickStamp | null): ClickStamp | null => {
    if (a === null || b === null) return a ?? b;
    if (attribution === 'first') return b.clickedAt < a.clickedAt ? b : a;
    return b.clickedAt > a.clickedAt ? b : a;
  };

  /**
   * The first of our cookies that verifies, or null. With `token`, only cookies holding that token are
   * verified (the value ends with `.` and the token in clear): a landing in 'last' mode looks for
   * nothing else.
   */
  async function fromCookie(
    header: string | undefined,
    context: R,
    at: number,
    token?: string,
  ): Promise<ClickStamp | null> {
    if (header === undefined || !header.includes(cookieNeedle)) return null;
    for (const value of cookieValues(header, cookieName, MAX_VALUES_PER_REQUEST)) {
      if (
        token !== undefined &&
        !(value.endsWith(token) && value.length === COOKIE_HEAD_CHARS + token.length)
      )
        continue;
      const decoded = await codec.decode(value, at);
      if (decoded.ok) return decoded.click;
      const reason = decoded.problem;
      if (resolved.onInvalid) {
        const onInvalid = resolved.onInvalid;
        report(() => onInvalid({ source: 'cookie', reason }, context));
      }
    }
    return null;
  }

  async function keyOf(context: R): Promise<string | null> {
    if (resolved.key === undefined) return null;
    try {
      const key = await resolved.key(context);
      return typeof key === 'string' && key !== '' ? key : null;
    } catch (error) {
      fail(error, context);
      return null;
    }
  }

  async function fromStore(key: string | null, context: R, at: number): Promise<ClickStamp | null> {
    if (store === undefined || key === null) return null;
    let click: ClickStamp | null;
    try {
      click = await store.get(key, at);
    } catch (error) {
      fail(error, context);
      return null;
    }
    if (click === null || click === undefined) return null;
    // A store is the app's code (or a table others write): what it returns is checked like a cookie.
    const reason = checkStoredClick(click, at, resolved);
    if (reason === null) return { token: click.token, clickedAt: click.clickedAt };
    if (resolved.onInvalid) {
      const onInvalid = resolved.onInvalid;
      report(() => onInvalid({ source: 'store', reason }, context));
    }
    return null;
  }

  async function consentOf(context: R): Promise<boolean> {
    if (resolved.consent === undefined) return true;
    try {
      return (await resolved.consent(context)) === true;
    } catch (error) {
      fail(error, context);
      return false;
    }
  }
  /** The request's consent, asked once when first needed (by `confirmOrder`); always given without a hook. */
  const consentLater = (context: R): (() => Promise<boolean>) => {
    if (resolved.consent === undefined) return ALLOWED;
    let promise: Promise<boolean> | undefined;
    return () => (promise ??= consentOf(context));
  };

  function lazy(header: string | undefined, context: R): ClickContext {
    let promise: Promise<ClickStamp | null> | undefined;
    const resolve = async (): Promise<ClickStamp | null> => {
      const at = now();
      const [cookieClick, storeClick] = await Promise.all([
        fromCookie(header, context, at),
        store === undefined ? null : keyOf(context).then((key) => fromStore(key, context, at)),
      ]);
      return pick(cookieClick, storeClick);
    };
    const click = () => {
      promise ??= resolve().catch((error: unknown) => {
        fail(error, context);
        return null;
      });
      return promise;
    };
    // Without a landing, the click is the kept one: cookie and store only.
    return { click, keptClick: click, consent: consentLater(context) };
  }

  /** The click of the signed cookie in `header` (any token), joined with `stored` (read before a landing). */
  function keptLater(
    header: string | undefined,
    context: R,
    stored: ClickStamp | null,
  ): () => Promise<ClickStamp | null> {
    let promise: Promise<ClickStamp | null> | undefined;
    return () =>
      (promise ??= fromCookie(header, context, now()).then(
        (cookie) => pick(cookie, stored),
        (error: unknown) => {
          fail(error, context);
          return stored;
        },
      ));
  }

  async function land(
    request: CaptureRequest,
    context: R,
    landed: ClickStamp,
    header: string | undefined,
  ): Promise<CaptureOutcome> {
    const at = landed.clickedAt;
    let click = landed;
    let cookieKept = false;
    let stored = false;
    let setCookie: string | null = null;
    /** What the store kept for the shopper before this landing (a landing may write another click there). */
    let storedBefore: ClickStamp | null = null;
    // Asked first: without consent the click is kept nowhere (no cookie, nothing put in the store).
    const allowed = await consentOf(context);
    try {
      const key = store === undefined ? null : await keyOf(context);
      const [cookieClick, storeClick] = await Promise.all([
        fromCookie(header, context, at, attribution === 'first' ? undefined : landed.token),
        fromStore(key, context, at),
      ]);
      storedBefore = storeClick;
      // The same token seen again (a reload, a restored tab, the history) is the same ad click: it keeps
      // the time it was first seen, or its window would restart and outlive the service's.
      const seen = firstSeen(firstSeen(landed, cookieClick), storeClick);
      click = attribution === 'first' ? (pick(pick(cookieClick, storeClick), seen) as ClickStamp) : seen;
      // A cookie that already holds the click is not re-issued: it expires with the window as it is.
      cookieKept = sameClick(cookieClick, click);
      if (!cookieKept && allowed) {
        const maxAge = Math.floor((click.clickedAt + confirmWindowMs - at) / 1000);
        if (maxAge > 0) setCookie = serializeCookie(await codec.encode(click), maxAge, resolved);
      }
      if (store !== undefined && key !== null && allowed) {
        // 'first' leaves a kept click in the store alone; 'last' writes the click unless it is there.
        if ((attribution === 'first' && storeClick !== null) || sameClick(storeClick, click)) stored = true;
        else {
          try {
            await store.put(key, click);
            stored = true;
          } catch (error) {
            fail(error, context);
          }
        }
      }
    } catch (error) {
      fail(error, context);
    }
    const redirect = redirectFor(request, setCookie !== null || cookieKept || stored);
    const result = Promise.resolve<ClickStamp | null>(click);
    const consent = allowed ? ALLOWED : () => REFUSED;
    const keptClick = keptLater(header, context, storedBefore);
    return { postback: { click: () => result, keptClick, consent }, setCookie, redirect };
  }

  const redirectFor = (request: CaptureRequest, kept: boolean): CaptureRedirect | null => {
    const method = request.method ?? 'GET';
    // Redirect only once the click is kept somewhere, else the clean URL would lose it.
    return resolved.cleanUrl && kept && (method === 'GET' || method === 'HEAD')
      ? { status: resolved.cleanUrlStatus, location: cleanUrlLocation(request.url, params) }
      : null;
  };

  // The common configuration (last click, no consent hook, no store) needs no awaiting: with a
  // synchronous HMAC the whole landing completes before the adapter calls the app.
  const simpleLanding = attribution === 'last' && resolved.consent === undefined && store === undefined;
  // A fresh click's cookie lives the whole window: everything around its value is the same every time.
  const [cookiePrefix, cookieSuffix] = serializeCookie(
    '\0',
    Math.floor(confirmWindowMs / 1000),
    resolved,
  ).split('\0') as [string, string];
  const fullWindowCookie = (value: string): string => cookiePrefix + value + cookieSuffix;
  const landQuickly = (
    request: CaptureRequest,
    context: R,
    click: ClickStamp,
    header: string | undefined,
  ): CaptureOutcome | Promise<CaptureOutcome> => {
    let clickPromise: Promise<ClickStamp | null> | undefined;
    const postback: ClickContext = {
      click: () => (clickPromise ??= Promise.resolve(click)),
      keptClick: keptLater(header, context, null),
      consent: ALLOWED,
    };
    try {
      const value = codec.encodeNow(click);
      if (typeof value === 'string') {
        return { postback, setCookie: fullWindowCookie(value), redirect: redirectFor(request, true) };
      }
      return value.then(
        (signed) => ({ postback, setCookie: fullWindowCookie(signed), redirect: redirectFor(request, true) }),
        (error: unknown) => unsigned(error, context, postback),
      );
    } catch (error) {
      return unsigned(error, context, postback);
    }
  };
  /** A landing whose cookie could not be signed: reported, and the click still serves this request. */
  const unsigned = (error: unknown, context: R, postback: ClickContext): CaptureOutcome => {
    fail(error, context);
    return { postback, setCookie: null, redirect: null };
  };

  const firstParam = params[0] as string;
  /** The landing's click; `firstAt` is where the first parameter's `name=` occurs in `url`, or -1. */
  function landedClick(url: string, firstAt: number, context: R): ClickStamp | null {
    // Nearly every landing: one pass over the URL, no intermediate strings or arrays.
    const token = findLandingToken(url, firstParam, firstAt, resolved);
    if (token !== undefined) return { token, clickedAt: now() };
    for (const found of findTokens(url, params, MAX_VALUES_PER_REQUEST)) {
      const problem = checkClickToken(found.value, resolved);
      if (problem === null) return { token: found.value, clickedAt: now() };
      if (resolved.onInvalid) {
        const onInvalid = resolved.onInvalid;
        const event = {
          source: 'url',
          param: found.param,
          reason: problem,
          value: reportedValue(found.value, MAX_REPORTED_CHARS),
        } as const;
        report(() => onInvalid(event, context));
      }
    }
    return null;
  }

  const { secrets: _secrets, ...settings } = resolved;
  return {
    settings: Object.freeze(settings),
    handle(request, context) {
      const url = request.url;
      const header = cookieHeaderOf(request);
      for (let i = 0; i < needles.length; i++) {
        const at = url.indexOf(needles[i] as string);
        if (at < 0) continue;
        const landed = landedClick(url, i === 0 ? at : -1, context);
        if (landed === null) break;
        // A cookie that may hold this very token (the landing URL opened again) must be read first, so
        // the click keeps its first time: the general path does that.
        const maybeSeen = header?.includes(cookieNeedle) === true && header.includes(landed.token);
        return simpleLanding && !maybeSeen
          ? landQuickly(request, context, landed, header)
          : land(request, context, landed, header);
      }
      const hasCookie = header?.includes(cookieNeedle) === true;
      if (!hasCookie && store === undefined) {
        if (resolved.consent === undefined) return NOTHING;
        const postback = {
          click: () => NULL_CLICK,
          keptClick: () => NULL_CLICK,
          consent: consentLater(context),
        };
        return { postback, setCookie: null, redirect: null };
      }
      return { postback: lazy(hasCookie ? header : undefined, context), setCookie: null, redirect: null };
    },
  };
}
