/** Entry point: `npm start` runs the Fastify shop from the environment until SIGINT/SIGTERM. */
import { ShopConfigError } from '@postback/example-shop-kit';
import { createShop } from './shop.ts';

try {
  const shop = await createShop(process.env);
  console.log(`fastify shop listening on ${shop.url}`);
  const stop = async () => {
    await shop.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  if (!(error instanceof ShopConfigError)) throw error;
  console.error(`configuration error: ${error.message}`);
  process.exit(2);
}
