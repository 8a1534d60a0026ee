/** Entry point: `npm start` runs the Fastify shop from the environment until SIGINT/SIGTERM. */
import { runShop } from '@postback/example-shop-kit';
import { createShop } from './shop.ts';

await runShop('fastify', createShop);
