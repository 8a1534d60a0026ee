/** POST /orders `{ order_id, total_micros }` → 201 `{ order_id, attributed }` (400 naming a bad field). */
import { placeOrder } from '@postback/example-shop-kit';
import { shopBackend } from '../../lib/backend';
import { jsonBody } from '../../lib/json-body';
import { postback } from '../../lib/postback';

export async function POST(request: Request): Promise<Response> {
  const backend = shopBackend();
  const answer = await placeOrder(backend, await jsonBody(request), (order) =>
    postback.confirmOrder(request, backend.outbox, order),
  );
  return Response.json(answer.body, { status: answer.status });
}
