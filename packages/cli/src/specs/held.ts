/** The table of `postback held`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, EXISTING_BACKEND_FLAGS } from './backend.ts';
import { READ_KEY_ENV, readKeyFlags } from './read-keys.ts';

const { sqs: _sqs, ...SQL_BACKEND_FLAGS } = EXISTING_BACKEND_FLAGS;
const BACKEND = '(--db FILE | --pg URL [--schema NAME])';

export const heldSpec = {
  name: 'held',
  summary: 'Orders held for a campaign not on s2s: list them, and decide them once it is switched',
  usage: [
    `postback held      ${BACKEND} [--account ID | --no-account] [--base-url URL] [--json]`,
    `postback held send ${BACKEND} (--account ID | --no-account) --campaign CMP [--created-before TIME]`,
    '                   [--as NAME] [--json]',
    `postback held drop ${BACKEND} (--account ID | --no-account) --campaign CMP [--created-before TIME]`,
    '                   [--as NAME] [--json]',
  ],
  description:
    'Orders the service refused because their campaign was not on s2s are held. Once the campaign\n' +
    'accepts s2s (a later order was accepted naming it) they wait for a decision (the worker option\n' +
    "onSwitch, default 'ask'): the pixel may have billed them already. Their windows keep running: an\n" +
    'order not decided before its deadline expires unsent.\n' +
    'list     one line per problem (account, campaign): orders, value, held since, earliest deadline,\n' +
    "         when the switch was seen, and with --base-url and a read key the campaign's spend at the\n" +
    '         hold, at the switch and now (each run takes a reading): the pixel billing meanwhile.\n' +
    'send     sends them (no pixel billed them): due now, each once; one past its deadline is expired.\n' +
    'drop     cancels them (the pixel billed them).\n' +
    'Both take one problem: --account ID (or --no-account) and --campaign CMP (`none`: held without a\n' +
    'campaign named), --created-before TIME only the orders created before TIME (ISO 8601), and write a\n' +
    'held-send or held-drop ledger row per order naming who decided (--as). A held reversal is always\n' +
    'sent. Not on SQS (a queue lists nothing).',
  positionals: true,
  env: [...READ_KEY_ENV, ...BACKEND_ENV.filter((v) => v.flag !== 'sqs')],
  flags: {
    ...SQL_BACKEND_FLAGS,
    account: { type: 'string', value: 'ID', help: 'the advertiser account (list: default every account)' },
    'no-account': { type: 'boolean', help: 'the jobs without an account' },
    campaign: { type: 'string', value: 'CMP', help: 'send, drop: the campaign (cmp_…), or none' },
    'created-before': {
      type: 'string',
      value: 'TIME',
      help: 'send, drop: only the orders created before this ISO 8601 time',
    },
    ...readKeyFlags('list'),
    as: {
      type: 'string',
      value: 'NAME',
      help: 'send, drop: who to record in the ledger. Default: $USER, else the system user',
    },
    json: { type: 'boolean', help: 'print one JSON object (shapes in the README)' },
  },
  exitCodes: '0 ok, 2 usage error (or a backend without held decisions: SQS), 3 backend unreachable.',
} as const satisfies CommandSpec;
