/**
 * The types around the capture options that a zod schema cannot hold: the request as core sees it, the
 * event of an ignored token or cookie, and the hooks typed over the framework's request (the schema in
 * `options.ts` checks only that they are functions), with the attribution modes.
 */
import type { CookieProblem } from './cookie-codec.ts';
import type { StoreProblem } from './store-check.ts';
import type { TokenProblem } from './token.ts';

/**
 * `last`: the newest click wins. `first`: the oldest click still inside the window wins. Either way, a
 * click is a token: the same token seen again (a landing URL reopened) keeps the time it was first seen.
 */
export type Attribution = 'last' | 'first';

/**
 * What capture reports through `onInvalid`: a bad token in the URL, a cookie that failed verification, or
 * a click the `store` returned that capture would not have accepted (it is treated as no click, so a
 * store's bad value never reaches `Set-Cookie` or an outbox).
 */
export type InvalidClickEvent =
  | {
      source: 'url';
      /** The query parameter that held it. */
      param: string;
      reason: TokenProblem;
      /**
       * The offending value, cut to 256 UTF-16 units (never inside a surrogate pair) and well-formed
       * Unicode (a lone surrogate becomes U+FFFD). Untrusted input: escape it before display.
       */
      value: string;
    }
  | { source: 'cookie'; reason: CookieProblem }
  | { source: 'store'; reason: StoreProblem };

/**
 * The request as core sees it. A Fetch API `Request` (and Next's `NextRequest`) fits as it is; Node
 * adapters pass `{ url: req.originalUrl, headers: req.headers, method: req.method }`.
 */
export interface CaptureRequest {
  /** Absolute URL, or origin-form path with query (`/landing?click_token=…`). */
  readonly url: string;
  /** HTTP method; the clean-URL redirect is only made for GET and HEAD. Absent means GET. */
  readonly method?: string | undefined;
  /** A `Headers`-like getter, or Node's lower-cased header record. Only `cookie` is read. */
  readonly headers:
    | { get(name: string): string | null | undefined }
    | Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The `Cookie` header, when the adapter has it at hand (Node's `req.headers.cookie`; null when the request
   * has none): then `headers` is not searched for it.
   */
  readonly cookie?: string | null | undefined;
}

/**
 * The hooks of the capture options, typed over `R`: what the framework's request is (Express `req`, Koa
 * `ctx`, Fetch `Request`), so a hook can read sessions or consent cookies.
 */
export interface CaptureHooks<R> {
  /**
   * Whether the click may be kept (cookie, `store`) and an order confirmed from it, on this request. Without
   * consent nothing is kept, `confirmOrder` enqueues nothing (`reason: 'no-consent'`), and the click still
   * shows in `click()` for this request only. A throw counts as no consent. @defaultValue always allowed
   */
  consent?: ((request: R) => boolean | Promise<boolean>) | undefined;
  /** The visitor or customer id to keep the click under in `store`; null/undefined when unknown. Required with `store`. */
  key?: ((request: R) => string | null | undefined | Promise<string | null | undefined>) | undefined;
  /** Told about every ignored token or cookie. Must not throw (a throw is swallowed). */
  onInvalid?: ((event: InvalidClickEvent, request: R) => void) | undefined;
  /** Told when `consent`, `key` or the store fail; capture carries on without them. @defaultValue logs the error's message with `console.error` */
  onError?: ((error: unknown, request: R) => void) | undefined;
}
