/** The table of `postback shadow`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, EXISTING_BACKEND_FLAGS } from './backend.ts';
import { READ_KEY_ENV, readKeyFlags } from './read-keys.ts';

/**
 * How far back `postback shadow report` looks when neither `--since` nor a shadow setting says.
 * @defaultValue 7d
 */
export const DEFAULT_SHADOW_REPORT_DAYS = 7;

const { sqs: _sqs, ...SQL_BACKEND_FLAGS } = EXISTING_BACKEND_FLAGS;
const BACKEND = '(--db FILE | --pg URL [--schema NAME])';
const SCOPE = '[--account ID | --no-account]';

export const shadowSpec = {
  name: 'shadow',
  summary: 'Shadow mode: record what would be sent, send nothing; compare with the pixel; end it',
  usage: [
    `postback shadow start  ${BACKEND} ${SCOPE} [--base-url URL] [--json]`,
    `postback shadow report ${BACKEND} ${SCOPE} [--since TIME|DURATION] [--base-url URL] [--json]`,
    `postback shadow end    ${BACKEND} ${SCOPE} [--send-unbilled-after TIME] [--as NAME] [--json]`,
  ],
  description:
    'start    puts the whole outbox (or one account: --account, --no-account) in shadow mode: every\n' +
    '         worker records each confirmation and reversal as it would send it and sends nothing (it\n' +
    '         sees the setting within its shadowRefreshMs, 5 s). With a read key, takes a spend reading.\n' +
    'report   per account and UTC day since --since (default: the start of shadow mode, else 7 days):\n' +
    '         orders with a click and their value, what was recorded (would have been sent), dropped\n' +
    "         and delivered, beside the spend of the account's campaigns between two readings (what the\n" +
    '         pixel billed; GET /v1/campaigns with a read key: each run takes a reading, so run it daily).\n' +
    '         --json adds each recorded request body.\n' +
    'end      ends shadow mode for the scope. The recorded orders are NOT sent (the pixel billed them),\n' +
    '         unless --send-unbilled-after TIME: those created at or after TIME (the pixel was off) are\n' +
    '         sent, inside their windows (one past its deadline is recorded expired, never sent late);\n' +
    '         the rest end cancelled, naming why.\n' +
    'TIME is ISO 8601 (2026-11-03T00:00:00Z); --since also takes a duration back from now (36h, 7d).\n' +
    'Not on SQS (a queue keeps no setting): run the shadow period on SQLite or Postgres.',
  positionals: true,
  env: [...READ_KEY_ENV, ...BACKEND_ENV.filter((v) => v.flag !== 'sqs')],
  flags: {
    ...SQL_BACKEND_FLAGS,
    account: { type: 'string', value: 'ID', help: 'the advertiser account (default: the whole outbox)' },
    'no-account': { type: 'boolean', help: 'the jobs without an account' },
    since: { type: 'string', value: 'TIME', help: 'report: from this time, or this long ago (7d)' },
    'send-unbilled-after': {
      type: 'string',
      value: 'TIME',
      help: 'end: send the recorded orders created at or after TIME (the pixel was off)',
    },
    ...readKeyFlags('start, report'),
    as: {
      type: 'string',
      value: 'NAME',
      help: 'end: who to record in the ledger for the decision. Default: $USER, else the system user',
    },
    json: { type: 'boolean', help: 'print one JSON object (shapes in the README)' },
  },
  exitCodes: '0 ok, 2 usage error (or a backend without shadow mode), 3 backend unreachable.',
} as const satisfies CommandSpec;
