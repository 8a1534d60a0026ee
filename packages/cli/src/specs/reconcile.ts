/** The table of `postback reconcile`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, EXISTING_BACKEND_FLAGS } from './backend.ts';

/**
 * The exit code of `postback reconcile` when something needs a person (a flag): above the shared codes,
 * `status`'s alerts and `doctor`'s 15.
 */
export const RECONCILE_EXIT_FLAGS = 16;

const { sqs: _sqs, ...SQL_BACKEND_FLAGS } = EXISTING_BACKEND_FLAGS;

export const reconcileSpec = {
  name: 'reconcile',
  summary: "Compare the outbox's orders per campaign with the service's figures; flag what needs a person",
  usage: [
    'postback reconcile (--db FILE | --pg URL [--schema NAME]) [--base-url URL] [--since DURATION]',
    '                   [--return-window DURATION|off] [--keys-file FILE] [--json]',
  ],
  description:
    'Per campaign, side by side: from the outbox, the confirmations delivered and maybe applied (a lost\n' +
    'answer), the reversals delivered and pending, with counts and order value; from the service, the\n' +
    'status, bid, budget and spend (GET /v1/campaigns) and the filtered clicks (GET /v1/refunds, matched\n' +
    'to our orders by click token where a record carries one). Orders whose campaign is unknown (their\n' +
    'answer was lost or carried none) stand in the unattributed row, never guessed into a campaign.\n' +
    'Flags: a maybe-applied order past its return window (or, open-ended, unknowable), a reversal ended\n' +
    "without the service's word or dead, an unattributed order that was refunded. Needs a key with the\n" +
    'read scope (POSTBACK_API_KEY, or per account as the worker reads them). Money is in micros in JSON.',
  env: [
    { name: 'POSTBACK_API_KEY', help: 'a key with the read scope (of the orders without an account)' },
    { name: 'POSTBACK_API_KEY__<ACCOUNT>', help: 'the key of one account (the keys file wins)' },
    ...BACKEND_ENV.filter((v) => v.flag !== 'sqs'),
  ],
  flags: {
    ...SQL_BACKEND_FLAGS,
    'base-url': {
      type: 'string',
      value: 'URL',
      help: "the service's base URL (http or https)",
      required: true,
      env: 'POSTBACK_API_URL',
    },
    'keys-file': {
      type: 'string',
      value: 'FILE',
      env: 'POSTBACK_KEYS_FILE',
      help: 'JSON object of account → API key, as the worker reads it',
    },
    since: {
      type: 'duration',
      value: 'DURATION',
      help: 'only the orders created within this (90m, 24h, 30d); the service figures are lifetime',
    },
    'return-window': {
      type: 'duration',
      value: 'DURATION',
      off: true,
      help: "the return window the flags use (default: the store's policy); off: open-ended",
    },
    json: {
      type: 'boolean',
      help: 'print {"campaigns": [...], "unattributed": {...}, "flags": [...], ...} (README)',
    },
  },
  exitCodes: `0 no flag, ${RECONCILE_EXIT_FLAGS} some flag needs a person, 2 usage error, 3 the outbox or the service unreachable.`,
} as const satisfies CommandSpec;
