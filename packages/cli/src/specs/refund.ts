/** The table of `postback refund`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_FLAGS, BACKEND_USAGE } from './backend.ts';

export const refundSpec = {
  name: 'refund',
  summary: 'Reverse one order (cancel or enqueue a reversal)',
  usage: [
    `postback refund ${BACKEND_USAGE} --order-id O [--account ID] [--campaign-id C]`,
    '                [--json]',
  ],
  description:
    'Reverses one order: cancels its confirmation if it was not sent yet, otherwise enqueues a reversal.',
  env: BACKEND_ENV,
  flags: {
    ...BACKEND_FLAGS,
    'order-id': { type: 'string', value: 'O', help: 'the order to reverse', required: true },
    account: {
      type: 'string',
      value: 'ID',
      help: 'the advertiser account of the order (as given to confirm). Default: none',
    },
    'campaign-id': {
      type: 'string',
      value: 'C',
      help:
        'the campaign (cmp_...) to reverse in; not needed when this outbox delivered\n' +
        'the confirmation (its response carries the campaign)',
    },
    as: {
      type: 'string',
      value: 'NAME',
      help: 'who to record in the ledger for this action. Default: $USER, else the system user',
    },
    json: {
      type: 'boolean',
      help: 'print {"outcome": "enqueued"|"duplicate"|"cancelled"|"not-charged"|"updated"|"window-closed",\n"job": {...}}',
    },
  },
  exitCodes: '0 done (any outcome), 2 invalid flag or value, 3 backend unreachable.',
} as const satisfies CommandSpec;
