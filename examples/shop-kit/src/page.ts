/**
 * The shops' landing page: one product, an Order button that POSTs `/orders` with a fresh order id, and
 * a Return button that POSTs the refund; both show the shop's answer in the page.
 */

/**
 * Renders the landing page.
 *
 * @example
 * ```ts
 * res.type('html').send(renderLandingPage({ shop: 'Express', clicked: click !== null }));
 * ```
 */
export function renderLandingPage(options: { shop: string; clicked: boolean }): string {
  const shop = options.shop.replace(/[^A-Za-z0-9 ]/g, '');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${shop} shop</title></head>
<body>
<h1>${shop} shop</h1>
<p id="visitor">${options.clicked ? 'Welcome, ad visitor' : 'Welcome'}</p>
<section>
  <h2>Trail shoes</h2>
  <p>Price: <span id="price" data-micros="49990000">49.99</span> USD</p>
  <button id="order" type="button">Order</button>
  <button id="return" type="button" disabled>Return</button>
</section>
<pre id="answer"></pre>
<script>
  const answer = document.getElementById('answer');
  const returnButton = document.getElementById('return');
  let orderId = null;
  async function send(path, body) {
    const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await res.json();
    answer.textContent = JSON.stringify({ status: res.status, ...json });
    return { status: res.status, json };
  }
  document.getElementById('order').addEventListener('click', async () => {
    orderId = 'ord_' + Date.now().toString(36) + Math.random().toString(36).slice(2, 10);
    const price = Number(document.getElementById('price').dataset.micros);
    const { status, json } = await send('/orders', { order_id: orderId, total_micros: price });
    // Only an attributed order has a confirmation to reverse.
    returnButton.disabled = !(status === 201 && json.attributed === true);
  });
  returnButton.addEventListener('click', async () => {
    if (orderId !== null) await send('/orders/' + encodeURIComponent(orderId) + '/refund');
  });
</script>
</body>
</html>
`;
}
