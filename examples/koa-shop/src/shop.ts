/**
 * The Koa shop: routes only. Capture runs on every page (`app.use(postback(...))`); orders and refunds go
 * through the shared handlers of `@postback/example-shop-kit`.
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
} from '@postback/example-shop-kit';
import { confirmOrder, type PostbackState, postback } from '@postback/koa';
import Koa from 'koa';

const REFUND_PATH = /^\/orders\/([^/]+)\/refund$/;

/**
 * Starts the shop configured by `env` (see the README for the variables).
 *
 * @example
 * ```ts
 * const shop = await createShop({ ...process.env, PORT: '0' });
 * console.log(shop.url);
 * await shop.close();
 * ```
 */
export async function createShop(env: Record<string, string | undefined>): Promise<Shop> {
  const config = readShopConfig(env);
  const backend = openShopBackend(config);
  const app = new Koa<PostbackState>();
  app.use(postback({ secrets: [config.secret], param: config.clickParam, secure: config.secureCookie }));

  app.use(async (ctx) => {
    // The path of the raw target (`ctx.url`, as sent), not `ctx.path`: that runs a URL parser which
    // throws on a target like `http://[/x`, and Koa answers 500. A target that is not a plain path
    // (`http://…`, `//[`) matches no route below: a 404.
    const query = ctx.url.indexOf('?');
    const path = query === -1 ? ctx.url : ctx.url.slice(0, query);
    const reply = (answer: Answer) => {
      ctx.status = answer.status;
      ctx.body = answer.body;
    };
    if (ctx.method === 'GET' && path === '/') {
      const click = await ctx.state.postback.click();
      ctx.type = 'html';
      ctx.body = renderLandingPage({ shop: 'Koa', clicked: click !== null });
      return;
    }
    if (ctx.method === 'POST' && path === '/orders') {
      const body = await readJsonBody(ctx.req);
      reply(await placeOrder(backend, body, (order) => confirmOrder(ctx, backend.outbox, order)));
      return;
    }
    const refund = ctx.method === 'POST' ? REFUND_PATH.exec(path) : null;
    if (refund !== null) {
      let orderId: string;
      try {
        orderId = decodeURIComponent(refund[1] as string);
      } catch {
        reply({ status: 400, body: { error: 'order_id is not a valid URL component', field: 'order_id' } });
        return;
      }
      reply(await refundOrder(backend, orderId));
      return;
    }
    reply({ status: 404, body: { error: 'not found', field: 'path' } });
  });

  return listenShop(createServer(app.callback()), config, backend);
}
