/**
 * The Express shop: routes only. Capture runs on every page (`app.use(postback(...))`); orders and
 * refunds go through the shared handlers of `@postback/example-shop-kit`.
 */
import { createServer } from 'node:http';
import {
  type Answer,
  listenShop,
  openShopBackend,
  placeOrder,
  readJsonBody,
  readShopConfig,
  refundOrder,
  renderLandingPage,
  type Shop,
  type ShopBackendOptions,
} from '@postback/example-shop-kit';
import { confirmOrder, postback } from '@postback/express';
import express from 'express';

/**
 * Starts the shop configured by `env` (see the README for the variables); `options.now` is the clock of
 * click capture, the outbox and the Dispatcher (a test gives the sandbox's).
 *
 * @example
 * ```ts
 * const shop = await createShop({ ...process.env, PORT: '0' });
 * console.log(shop.url);
 * await shop.close();
 * ```
 */
export async function createShop(
  env: Record<string, string | undefined>,
  options: ShopBackendOptions = {},
): Promise<Shop> {
  const config = readShopConfig(env);
  const backend = openShopBackend(config, options);
  const now = options.now ?? Date.now;
  const app = express();
  app.disable('x-powered-by');
  app.use(postback({ secrets: [config.secret], param: config.clickParam, secure: config.secureCookie, now }));

  const reply = (res: express.Response, answer: Answer) => res.status(answer.status).json(answer.body);

  app.get('/', async (req, res) => {
    const click = await req.postback.click();
    res.type('html').send(renderLandingPage({ shop: 'Express', clicked: click !== null }));
  });
  app.post('/orders', async (req, res) => {
    const body = await readJsonBody(req);
    reply(res, await placeOrder(backend, body, (order) => confirmOrder(req, backend.outbox, order)));
  });
  app.post('/orders/:orderId/refund', async (req, res) => {
    reply(res, await refundOrder(backend, req.params.orderId));
  });

  return listenShop(createServer(app), config, backend);
}
