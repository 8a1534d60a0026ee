/**
 * The landing page: one product and the Order button. Reads the click with `getClick()` — on the very
 * landing request too, thanks to the header the proxy forwards.
 */
import { postback } from '../lib/postback';
import { OrderButtons } from './order-buttons';

// Per request: the page depends on the visitor's click (and the secret is a run-time setting).
export const dynamic = 'force-dynamic';

export default async function LandingPage() {
  const click = await postback.getClick();
  return (
    <main>
      <h1>Next shop</h1>
      <p id="visitor">{click ? 'Welcome, ad visitor' : 'Welcome'}</p>
      <section>
        <h2>Trail shoes</h2>
        <p>
          Price: <span id="price">49.99</span> USD
        </p>
        <OrderButtons priceMicros={49_990_000} />
      </section>
    </main>
  );
}
