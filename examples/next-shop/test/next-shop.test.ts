/** The Next.js shop on Next 16 (this workspace's `next`), end to end: see `shop-flow.ts`. */
import { fileURLToPath } from 'node:url';
import { describeNextShop } from './shop-flow.ts';

describeNextShop({
  label: 'Next 16',
  root: fileURLToPath(new URL('..', import.meta.url)),
  buildLimitMs: 170_000,
});
