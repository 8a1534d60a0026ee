/** Entry point: `npm start` runs the Express shop from the environment until SIGINT/SIGTERM. */
import { runShop } from '@postback/example-shop-kit';
import { createShop } from './shop.ts';

await runShop('express', createShop);
