/** Entry point: `npm start` runs the Koa shop from the environment until SIGINT/SIGTERM. */
import { runShop } from '@postback/example-shop-kit';
import { createShop } from './shop.ts';

await runShop('koa', createShop);
