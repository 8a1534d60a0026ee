/**
 * The shop's click capture, shared by `proxy.ts` and the routes. Its options are read on first use
 * (the @postback/next README's pattern), so `next build`, which loads the route modules, does not need
 * the secret. Reads only what capture needs, so the proxy bundle does not pull in the SQLite outbox.
 */
import { createPostback } from '@postback/next';

const isLocal = (host: string): boolean => ['127.0.0.1', 'localhost', '::1'].includes(host);

function secureCookie(env: Record<string, string | undefined>): boolean {
  const value = env.POSTBACK_SECURE_COOKIE;
  if (value === 'on' || value === 'true' || value === '1') return true;
  if (value === 'off' || value === 'false' || value === '0') return false;
  // Browsers drop Secure cookies on plain http, so local development needs them off.
  return !isLocal(env.HOST || '127.0.0.1');
}

/**
 * The shop's `@postback/next` adapter (`POSTBACK_SECRET`, `POSTBACK_CLICK_PARAM`, `POSTBACK_SECURE_COOKIE`),
 * configured from the environment on its first use.
 *
 * @throws {OptionsError} on use, naming `secrets`, when `POSTBACK_SECRET` is missing or shorter than 32
 * characters.
 * @example
 * ```ts
 * const click = await postback.getClick();
 * ```
 */
export const postback = createPostback(() => ({
  secrets: [process.env.POSTBACK_SECRET ?? ''],
  param: process.env.POSTBACK_CLICK_PARAM || undefined,
  secure: secureCookie(process.env),
}));
