/**
 * Click capture: find the token in the landing URL, stamp it, keep it in a signed first-party cookie
 * (and optionally a server-side `ClickStore`), and hand the request's click to the app — lazily, so
 * requests that never read it pay nothing for verification. Adapters (express, koa, next, the Fetch
 * wrapper here) only convert their request and apply the returned outcome.
 */
export { decodeBase64Url, encodeBase64Url } from './base64url.ts';
export { cleanUrlLocation } from './clean-url.ts';
export { type ConfirmOrderResult, confirmClickOrder, type OrderToConfirm } from './confirm.ts';
export {
  CLICK_COOKIE_VERSION,
  type ClickCookieCodec,
  type ClickCookieCodecOptions,
  type CookieProblem,
  createClickCookieCodec,
  type DecodedCookie,
} from './cookie-codec.ts';
export { appendSetCookie, cookieValues, type SetCookieTarget, serializeCookie } from './cookie-header.ts';
export {
  type CaptureOutcome,
  type CaptureRedirect,
  type ClickCapture,
  type ClickContext,
  createClickCapture,
} from './engine.ts';
export { CaptureError, type CaptureErrorReason } from './errors.ts';
export { type PostbackFetchHandler, withPostback } from './fetch.ts';
export {
  type HmacSha256,
  type NodeCryptoHmac,
  nodeCryptoHmac,
  webCryptoHmac,
  withDefaultHmac,
} from './hmac.ts';
export { createMemoryClickStore, type MemoryClickStoreOptions } from './memory-click-store.ts';
export {
  type Attribution,
  CAPTURE_OPTIONS_SCHEMA,
  type CaptureOptions,
  type CaptureRequest,
  DEFAULT_ATTRIBUTION,
  DEFAULT_CLEAN_URL_STATUS,
  DEFAULT_COOKIE_NAME,
  type InvalidClickEvent,
  MIN_SECRET_LENGTH,
  type ResolvedCaptureOptions,
  renderCaptureOptionsTable,
  resolveCaptureOptions,
} from './options.ts';
export {
  checkClickToken,
  DEFAULT_CLICK_PARAM,
  DEFAULT_TOKEN_MAX_LENGTH,
  DEFAULT_TOKEN_MIN_LENGTH,
  type FoundToken,
  findTokens,
  stripParams,
  TOKEN_CHARACTERS,
  type TokenProblem,
  type TokenRules,
} from './token.ts';
