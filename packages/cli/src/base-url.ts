/**
 * The ad service's base URL as every command that talks to it reads it (`--base-url`, `POSTBACK_API_URL`):
 * checked once here, so `worker`, `doctor` and `reconcile` refuse the same values with the same words.
 */
import { UsageError } from './args.ts';

/**
 * Checks a base URL and returns it without query, fragment or trailing slash (the client appends
 * `/v1/...` to its path, and the URL is printed). Credentials in the URL are refused: the key is
 * `POSTBACK_API_KEY`, never part of an address that is logged.
 *
 * @throws {UsageError} naming `--base-url` (exit 2).
 * @example
 * ```ts
 * parseBaseUrl('https://ads.example/'); // 'https://ads.example'
 * ```
 */
export function parseBaseUrl(value: string): string {
  if (value === '') throw new UsageError('give --base-url URL or set POSTBACK_API_URL');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--base-url must be an http(s) URL, got '${value}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--base-url must be an http(s) URL, got '${value}'`);
  if (url.username !== '' || url.password !== '')
    throw new UsageError('--base-url must not carry credentials; use POSTBACK_API_KEY');
  if (endsInVersion(value))
    throw new UsageError(
      '--base-url must not end in /v1: /v1 is added to every path (give the part before it, e.g. https://ads.example)',
    );
  // Kept without query or fragment: the client appends `/v1/...` to the path, and the URL is logged.
  return `${url.origin}${url.pathname}`.replace(/\/$/, '');
}

/**
 * Whether a base URL's path already ends in `/v1` (any case, trailing slashes aside): every request
 * would then go to `/v1/v1/...`. The client refuses such a `baseUrl` too.
 *
 * @example
 * ```ts
 * endsInVersion('https://ads.example/v1/'); // true
 * ```
 */
export function endsInVersion(baseUrl: string): boolean {
  return URL.canParse(baseUrl) && /\/v1\/*$/i.test(new URL(baseUrl).pathname);
}
