/**
 * @postback/sandbox/shop-testing — test a shop's own integration with the ad service: an in-process
 * sandbox that lands ad clicks on the shop's app and asserts what the service applied, with a clock the
 * shop shares. See the README's "Testing your shop".
 */

export type { SandboxConversion, SandboxConversionReport } from '../control-client.ts';
export {
  type ClickedShopper,
  DEFAULT_EXPECT_TIMEOUT_MS,
  DEFAULT_NO_CONVERSION_WAIT_MS,
  DEFAULT_SHOP_BID_MICROS,
  type ShopSandbox,
  type ShopSandboxOptions,
  startShopSandbox,
} from './shop-sandbox.ts';
export { createShopper, type Shopper } from './shopper.ts';
