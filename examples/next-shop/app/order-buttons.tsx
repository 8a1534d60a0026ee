'use client';
/** The Order and Return buttons: POST `/orders`, then (for an attributed order) its refund. */
import { useState } from 'react';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function send(path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

export function OrderButtons({ priceMicros }: { priceMicros: number }) {
  const [orderId, setOrderId] = useState<string | null>(null);
  const [refundable, setRefundable] = useState(false);
  const [answer, setAnswer] = useState('');

  async function order() {
    const id = `ord_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    const result = await send('/orders', { order_id: id, total_micros: priceMicros });
    setOrderId(id);
    // Only an attributed order has a confirmation to reverse.
    setRefundable(result.status === 201 && result.body.attributed === true);
    setAnswer(JSON.stringify({ status: result.status, ...result.body }));
  }

  async function refund() {
    if (orderId === null) return;
    const result = await send(`/orders/${encodeURIComponent(orderId)}/refund`);
    setAnswer(JSON.stringify({ status: result.status, ...result.body }));
  }

  return (
    <>
      <button id="order" type="button" onClick={order}>
        Order
      </button>
      <button id="return" type="button" disabled={!refundable} onClick={refund}>
        Return
      </button>
      <pre id="answer">{answer}</pre>
    </>
  );
}
