/**
 * Next 15 middleware (Edge runtime): captures the ad click on every page and API request. The only
 * source file of its own; the rest of the app is the Next 16 shop's, copied in by `scripts/copy-app.ts`.
 */
import { postback } from './lib/postback';

export const middleware = postback.middleware;

export const config = { matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'] };
