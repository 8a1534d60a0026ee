/**
 * The Next.js shop on Next 15 (this workspace's `next@15`, its default webpack build, `middleware.ts`
 * on the Edge runtime), end to end with the same checks as on Next 16: see `next-shop/test/shop-flow.ts`.
 */
import { fileURLToPath } from 'node:url';
import { describeNextShop } from '../../next-shop/test/shop-flow.ts';
import { copyShopApp } from '../scripts/copy-app.ts';

describeNextShop({
  label: 'Next 15',
  root: fileURLToPath(new URL('..', import.meta.url)),
  buildLimitMs: 300_000,
  prepare: copyShopApp,
});
