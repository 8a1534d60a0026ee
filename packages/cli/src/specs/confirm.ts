/** The table of `postback confirm`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_FLAGS, BACKEND_USAGE } from './backend.ts';

export const confirmSpec = {
  name: 'confirm',
  summary: 'Enqueue the confirmation of one order',
  usage: [
    `postback confirm ${BACKEND_USAGE} --click-token T --order-id O`,
    '                 --value-micros N [--clicked-at ISO] [--account ID] [--json]',
  ],
  description: "Enqueues the confirmation of one order. Run 'postback worker' to deliver it.",
  env: BACKEND_ENV,
  flags: {
    ...BACKEND_FLAGS,
    'click-token': {
      type: 'string',
      value: 'T',
      help: 'the click token that arrived on the landing URL',
      required: true,
    },
    'order-id': {
      type: 'string',
      value: 'O',
      help: 'your order id (the idempotency key at the service)',
      required: true,
    },
    'value-micros': {
      type: 'string',
      value: 'N',
      help: 'order value in integer micros (1 USD = 1000000)',
      required: true,
    },
    'clicked-at': {
      type: 'string',
      value: 'ISO',
      help:
        'when the click happened, ISO 8601 with a zone (default: now). The deadline is\n' +
        '7 days after it, minus a safety margin: give the real click time.',
    },
    account: {
      type: 'string',
      value: 'ID',
      help:
        'the advertiser account of the order (your shop or tenant id, never a key); the\n' +
        "worker sends the job with that account's key. The order is its account and its\n" +
        'order id: two accounts may both have an order O. Default: none',
    },
    json: { type: 'boolean', help: 'print {"created": boolean, "job": {...}}' },
  },
  exitCodes:
    '0 enqueued or already there, 2 invalid flag or value (the message names it),\n3 backend unreachable.',
} as const satisfies CommandSpec;
