/**
 * Order and refund handling shared by the shops: body parsing and checks (400 naming the field), the
 * confirmation through the adapter's `confirmOrder`, and the refund through the outbox.
 */
import type { IncomingMessage } from 'node:http';
import { JobValidationError } from '@postback/core';
import type { ShopBackend } from './backend.ts';

/** An HTTP answer: status and JSON body. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const MAX_BODY_BYTES = 16 * 1024;
const ORDER_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Marker for a body that is not JSON. */
const NOT_JSON = Symbol('not-json');

/**
 * Reads a request body as JSON (at most 16 KiB); a body that is not JSON reads as a marker the order
 * checks turn into a 400.
 *
 * @example
 * ```ts
 * const body = await readJsonBody(req);
 * ```
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return NOT_JSON;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}

const bad = (field: string, error: string): Answer => ({ status: 400, body: { error, field } });

/**
 * Checks an order body and confirms it: `confirm` is the adapter's `confirmOrder` bound to the request.
 * 201 `{ order_id, attributed }`; 400 `{ error, field }` for a malformed body.
 *
 * @example
 * ```ts
 * const answer = await placeOrder(backend, await readJsonBody(req), (order) => confirmOrder(req, backend.outbox, order));
 * ```
 */
export async function placeOrder(
  backend: ShopBackend,
  body: unknown,
  confirm: (order: { orderId: string; valueMicros: number }) => Promise<{ enqueued: boolean }>,
): Promise<Answer> {
  if (body === NOT_JSON || typeof body !== 'object' || body === null || Array.isArray(body))
    return bad('body', 'body must be a JSON object');
  const { order_id: orderId, total_micros: totalMicros, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) return bad(unknown, 'is not a known field');
  if (typeof orderId !== 'string' || !ORDER_ID.test(orderId))
    return bad('order_id', 'order_id must be 1-128 characters of A-Z a-z 0-9 _ . : -');
  if (typeof totalMicros !== 'number' || !Number.isSafeInteger(totalMicros) || totalMicros <= 0)
    return bad('total_micros', 'total_micros must be a positive integer (micros)');
  try {
    const { enqueued } = await confirm({ orderId, valueMicros: totalMicros });
    if (enqueued) backend.enqueued();
    return { status: 201, body: { order_id: orderId, attributed: enqueued } };
  } catch (error) {
    if (error instanceof JobValidationError) return bad(error.field, error.message);
    throw error;
  }
}

/**
 * Enqueues the reversal of an attributed order (or cancels its unsent confirmation).
 * 202 `{ order_id, outcome }`; 404 when no confirmation was ever queued for the order.
 *
 * @example
 * ```ts
 * const answer = await refundOrder(backend, 'ord_1');
 * ```
 */
export async function refundOrder(backend: ShopBackend, orderId: string): Promise<Answer> {
  if (!ORDER_ID.test(orderId))
    return bad('order_id', 'order_id must be 1-128 characters of A-Z a-z 0-9 _ . : -');
  const jobs = await backend.outbox.getByOrder(orderId);
  if (!jobs.some((job) => job.kind === 'confirm'))
    return { status: 404, body: { error: 'no attributed order with this id', field: 'order_id' } };
  const { outcome } = await backend.outbox.refund({ orderId });
  backend.enqueued();
  return { status: 202, body: { order_id: orderId, outcome } };
}
