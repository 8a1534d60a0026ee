/** The table of `postback ledger`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, EXISTING_BACKEND_FLAGS } from './backend.ts';

export const ledgerSpec = {
  name: 'ledger',
  summary: 'Who moved the money: the ledger of operator actions and final states',
  usage: [
    'postback ledger (--db FILE | --pg URL [--schema NAME]) [--since TIME|DURATION] [--order ID]',
    '                [--account ID] [--limit N] [--json]',
  ],
  description:
    'Lists the ledger, oldest first: each operator action that moved money (replay, purge, withdraw,\n' +
    'refund, held send/drop, shadow end) with who took it, and each final money state of a job\n' +
    '(applied, reversed, expired, unmatched, dead, by the dispatcher). Rows are never changed and prune\n' +
    'never removes them (they are kept 400 days). SQS keeps no ledger.',
  env: BACKEND_ENV,
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    since: {
      type: 'string',
      value: 'TIME|DURATION',
      help: 'only rows at or after this ISO 8601 time, or this long ago (2h, 7d)',
    },
    order: { type: 'string', value: 'ID', help: 'only the rows of this order id' },
    account: { type: 'string', value: 'ID', help: 'only the rows of this advertiser account' },
    limit: { type: 'integer', value: 'N', help: 'at most N rows (1 to 10000). Default: 1000' },
    json: {
      type: 'boolean',
      help: 'print {"rows": [{"seq", "at", "actor", "kind", "jobId", "orderId", "account",\n"valueMicros", "reason"}]} (at as ISO 8601)',
    },
  },
  exitCodes: '0 done, 2 invalid flag or value or a backend without a ledger (SQS), 3 backend unreachable.',
} as const satisfies CommandSpec;
