/**
 * Next 16 proxy (Node.js runtime): captures the ad click on every page and API request. On Next 15,
 * the same code goes in `middleware.ts` as `export const middleware = …`.
 */
import { postback } from './lib/postback';

export const proxy = postback.proxy;

export const config = { matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'] };
