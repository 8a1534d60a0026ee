/**
 * The framework-neutral half of the example shops (Express and Koa): configuration from the environment,
 * the landing page, order and refund handling, the backend (SQLite outbox + in-process Dispatcher), and
 * how a shop listens and runs.
 * Each shop only routes requests to these functions, so the two stay small and cannot drift apart.
 */

export { openShopBackend, type ShopBackend, type ShopBackendOptions } from './backend.ts';
export { readShopConfig, type ShopConfig, ShopConfigError } from './config.ts';
export { type Answer, placeOrder, readJsonBody, refundOrder } from './orders.ts';
export { renderLandingPage } from './page.ts';
export { listenShop, runShop, type Shop } from './serve.ts';
