/**
 * The shops' configuration, read from environment variables (one hand-written schema: names, defaults,
 * checks). A bad value throws `ShopConfigError` naming the variable; secrets are never echoed.
 */
import { DEFAULT_CLICK_PARAM } from '@postback/core';

/** Port the shop listens on when `PORT` is unset. @defaultValue 3000 */
export const DEFAULT_SHOP_PORT = 3000;
/** SQLite file of the outbox when `POSTBACK_DB` is unset. @defaultValue 'postback.db' */
export const DEFAULT_SHOP_DB = 'postback.db';

/** A shop's settings. */
export interface ShopConfig {
  /** `PORT` (0 = a free port). */
  port: number;
  /** `HOST`, default 127.0.0.1. */
  host: string;
  /** `POSTBACK_API_URL`: the ad service (or sandbox). */
  apiUrl: string;
  /** `POSTBACK_API_KEY`: a key with the `conversions` scope. */
  apiKey: string;
  /** `POSTBACK_SECRET`: cookie signing secret, ≥ 32 characters. */
  secret: string;
  /** `POSTBACK_CLICK_PARAM`, default `click_token`. */
  clickParam: string;
  /** `POSTBACK_DB`: SQLite file of the outbox. */
  dbFile: string;
  /** `POSTBACK_WORKER` is not `off`: deliver in this process. */
  worker: boolean;
  /** `POSTBACK_SECURE_COOKIE`: `Secure` cookie attribute; default off only for plain http on localhost. */
  secureCookie: boolean;
}

/** A missing or invalid environment variable (`field` names it). */
export class ShopConfigError extends Error {
  override name = 'ShopConfigError';
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

const required = (env: Record<string, string | undefined>, name: string): string => {
  const value = env[name];
  if (value === undefined || value === '') throw new ShopConfigError(name, 'is required');
  return value;
};

const flag = (env: Record<string, string | undefined>, name: string): boolean | undefined => {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (['on', 'true', '1'].includes(value)) return true;
  if (['off', 'false', '0'].includes(value)) return false;
  throw new ShopConfigError(name, 'must be on or off');
};

/**
 * Reads and checks the shop's environment.
 *
 * @example
 * ```ts
 * const config = readShopConfig(process.env);
 * ```
 */
export function readShopConfig(env: Record<string, string | undefined>): ShopConfig {
  const portText = env.PORT ?? String(DEFAULT_SHOP_PORT);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535)
    throw new ShopConfigError('PORT', 'must be an integer 0..65535');
  const host = env.HOST || '127.0.0.1';
  const apiUrl = required(env, 'POSTBACK_API_URL');
  if (!URL.canParse(apiUrl) || !/^https?:$/.test(new URL(apiUrl).protocol))
    throw new ShopConfigError('POSTBACK_API_URL', 'must be an http(s) URL');
  const apiKey = required(env, 'POSTBACK_API_KEY');
  const secret = required(env, 'POSTBACK_SECRET');
  if (secret.length < 32) throw new ShopConfigError('POSTBACK_SECRET', 'must be at least 32 characters');
  const clickParam = env.POSTBACK_CLICK_PARAM || DEFAULT_CLICK_PARAM;
  const worker = flag(env, 'POSTBACK_WORKER') ?? true;
  // Browsers drop Secure cookies on plain http, so local development over http://localhost needs it off.
  const local = ['127.0.0.1', 'localhost', '::1'].includes(host);
  const secureCookie = flag(env, 'POSTBACK_SECURE_COOKIE') ?? !local;
  const config = {
    port,
    host,
    apiUrl,
    clickParam,
    dbFile: env.POSTBACK_DB || DEFAULT_SHOP_DB,
    worker,
    secureCookie,
  };
  // Not enumerable: the secrets stay out of util.inspect, JSON and logged configs.
  Object.defineProperty(config, 'apiKey', { value: apiKey, enumerable: false });
  Object.defineProperty(config, 'secret', { value: secret, enumerable: false });
  return config as ShopConfig;
}
