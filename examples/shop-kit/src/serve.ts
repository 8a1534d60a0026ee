/**
 * How every example shop runs: listening on the configured address with its backend (closed with it), and
 * the `npm start` entry point that stops on SIGINT/SIGTERM and exits 2 on a configuration error.
 */
import type { Server } from 'node:http';
import type { ShopBackend } from './backend.ts';
import { type ShopConfig, ShopConfigError } from './config.ts';

/** A running shop. */
export interface Shop {
  /** `http://host:port` it listens on. */
  url: string;
  backend: ShopBackend;
  close(): Promise<void>;
}

/**
 * Starts `server` on the configured host and port; closing the shop closes the server, then the backend
 * (also closed when listening fails).
 *
 * @example
 * ```ts
 * return listenShop(createServer(app), config, backend);
 * ```
 */
export async function listenShop(server: Server, config: ShopConfig, backend: ShopBackend): Promise<Shop> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  }).catch(async (error: unknown) => {
    await backend.close();
    throw error;
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  return {
    url: `http://${config.host}:${port}`,
    backend,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await backend.close();
    },
  };
}

/**
 * The entry point of `npm start`: runs the shop from the environment until SIGINT/SIGTERM; a bad
 * setting prints `configuration error: …` and exits 2.
 *
 * @example
 * ```ts
 * await runShop('express', createShop);
 * ```
 */
export async function runShop(
  name: string,
  createShop: (env: Record<string, string | undefined>) => Promise<Shop>,
): Promise<void> {
  try {
    const shop = await createShop(process.env);
    console.log(`${name} shop listening on ${shop.url}`);
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
}
