/**
 * The Fastify shop: routes only. Capture runs on every request (`app.register(postback, ...)`); orders
 * and refunds go through the shared handlers of `@postback/example-shop-kit`.
 */
import type { IncomingMessage } from 'node:http';
import {
  type Answer,
  openShopBackend,
  placeOrder,
  readJsonBody,
  readShopConfig,
  refundOrder,
  renderLandingPage,
  type Shop,
} from '@postback/example-shop-kit';
import { confirmOrder, postback } from '@postback/fastify';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

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
  const app = Fastify({ forceCloseConnections: true });
  await app.register(postback, {
    secrets: [config.secret],
    param: config.clickParam,
    secure: config.secureCookie,
  });
  // Bodies are read by the shared kit, so every shop answers malformed JSON the same way.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request: FastifyRequest, payload: IncomingMessage) =>
    readJsonBody(payload),
  );

  const reply = (res: FastifyReply, answer: Answer) => res.code(answer.status).send(answer.body);

  app.get('/', async (request, res) => {
    const click = await request.postback.click();
    return res
      .type('text/html; charset=utf-8')
      .send(renderLandingPage({ shop: 'Fastify', clicked: click !== null }));
  });
  app.post('/orders', async (request, res) =>
    reply(
      res,
      await placeOrder(backend, request.body, (order) => confirmOrder(request, backend.outbox, order)),
    ),
  );
  app.post<{ Params: { orderId: string } }>('/orders/:orderId/refund', async (request, res) =>
    reply(res, await refundOrder(backend, request.params.orderId)),
  );

  await app.listen({ port: config.port, host: config.host }).catch(async (error: unknown) => {
    await backend.close();
    throw error;
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  return {
    url: `http://${config.host}:${port}`,
    backend,
    async close() {
      await app.close();
      await backend.close();
    },
  };
}
