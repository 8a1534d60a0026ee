/** The table of `postback job`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_USAGE, EXISTING_BACKEND_FLAGS } from './backend.ts';

export const jobSpec = {
  name: 'job',
  summary: 'Show one job whole, with its attempt history',
  usage: [
    `postback job ${BACKEND_USAGE} ID [--json]`,
    `postback job ${BACKEND_USAGE} --order ORDER [--account ID] [--json]`,
  ],
  description:
    'Shows one job (by id) or both jobs of an order (its confirmation and its refund): state, kind,\n' +
    'order, account, campaign, attempts, when it was created and last changed, its next attempt, its\n' +
    'deadline and the time left, when a request may have been applied, its last error, and every\n' +
    'recorded attempt (oldest first: start time, duration, outcome, HTTP status, detail). Times are\n' +
    'ISO 8601, with the time relative to now in text output. An order is its account and its order id:\n' +
    '--order alone shows the order without an account; when there is none, the accounts that have an\n' +
    'order with that id are named.',
  positionals: true,
  env: BACKEND_ENV,
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    order: { type: 'string', value: 'ORDER', help: 'show the jobs of this order instead of one id' },
    account: {
      type: 'string',
      value: 'ID',
      help:
        'with --order: the advertiser account of the order (an order is its account and\n' +
        'its id). Default: the order without an account',
    },
    json: { type: 'boolean', help: 'print one JSON object (shape in the README)' },
  },
  exitCodes: '0 ok, 1 no such job (or no job for the order), 2 usage error, 3 backend unreachable.',
} as const satisfies CommandSpec;
