/** POST /orders/:order_id/refund → 202 `{ order_id, outcome }`; 404 for an order never attributed. */
import { refundOrder } from '@postback/example-shop-kit';
import { shopBackend } from '../../../../lib/backend';

export async function POST(
  _request: Request,
  { params }: { params: Promise<{ order_id: string }> },
): Promise<Response> {
  const answer = await refundOrder(shopBackend(), (await params).order_id);
  return Response.json(answer.body, { status: answer.status });
}
