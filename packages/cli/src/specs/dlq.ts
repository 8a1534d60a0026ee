/** The table of `postback dlq`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_USAGE, EXISTING_BACKEND_FLAGS } from './backend.ts';

/**
 * How many dead jobs `dlq list` shows when `--limit` is not given. (Not a table default: `replay` and
 * `purge` refuse `--limit`, so the flag must stay unset unless the user gave it.)
 * @defaultValue 50
 */
export const DEFAULT_DLQ_LIMIT = 50;

const SELECT = '(--id ID ... | --all | [--reason REGEX] [--status CODE] [--older-than DURATION]';
const SELECT_ACCOUNT = '                    [--account ID | --no-account])';

export const dlqSpec = {
  name: 'dlq',
  summary: 'List, replay or purge dead jobs',
  usage: [
    `postback dlq list   ${BACKEND_USAGE} [--account ID | --no-account] [--limit N] [--after ID]`,
    '                    [--json]',
    `postback dlq replay ${BACKEND_USAGE} ${SELECT}`,
    `${SELECT_ACCOUNT} [--dry-run] [--json]`,
    `postback dlq purge  ${BACKEND_USAGE} ${SELECT}`,
    `${SELECT_ACCOUNT} [--dry-run] [--yes] [--json]`,
  ],
  description:
    'list     dead jobs with their reasons, oldest first\n' +
    'replay   put dead jobs back to pending, due now, attempts reset; a job past its deadline becomes\n' +
    '         expired instead (never sent late) and is reported by id, order and deadline, as is a dead\n' +
    '         confirmation cancelled because its order was refunded. Shows a progress bar on a terminal.\n' +
    'purge    delete dead jobs for good: asks y/N when stdin is a terminal, needs --yes otherwise\n' +
    '\n' +
    'replay and purge act on the jobs given by --id, on every dead job (--all), or on the dead jobs\n' +
    'matching every filter given (--reason, --status, --older-than, --account or --no-account).\n' +
    '--dry-run lists what would be done and changes nothing. --account ID keeps to the dead jobs of\n' +
    'one advertiser account, --no-account to those without one; list takes them too.',
  positionals: true,
  env: BACKEND_ENV,
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    limit: {
      type: 'integer',
      value: 'N',
      help: `list: how many jobs to show (default ${DEFAULT_DLQ_LIMIT})`,
    },
    after: { type: 'string', value: 'ID', help: 'list: continue after this job (the "next" of a page)' },
    id: { type: 'string', value: 'ID', help: 'replay, purge: the dead job to act on', multiple: true },
    all: { type: 'boolean', help: 'replay, purge: every dead job' },
    reason: {
      type: 'string',
      value: 'REGEX',
      help: "replay, purge: dead jobs whose reason matches (a JavaScript regular\nexpression, e.g. '422|older than')",
    },
    status: {
      type: 'integer',
      value: 'CODE',
      help: 'replay, purge: dead jobs whose last answer had this HTTP status',
      min: 100,
      max: 599,
    },
    'older-than': {
      type: 'duration',
      value: 'DURATION',
      help: 'replay, purge: dead jobs dead for longer than this (90m, 2h, 3d)',
    },
    account: {
      type: 'string',
      value: 'ID',
      help: 'list, replay, purge: only the dead jobs of this advertiser account',
    },
    'no-account': { type: 'boolean', help: 'list, replay, purge: only the dead jobs without an account' },
    'dry-run': { type: 'boolean', help: 'replay, purge: list what would be done, change nothing' },
    yes: {
      type: 'boolean',
      short: 'y',
      help: 'purge: do not ask for confirmation (needed when stdin is not a terminal)',
    },
    as: {
      type: 'string',
      value: 'NAME',
      help: 'who to record in the ledger for this action. Default: $USER, else the system user',
    },
    json: { type: 'boolean', help: 'print one JSON object (shapes in the README)' },
  },
  exitCodes:
    '0 ok, 1 some --id was not a dead job (or purge was declined), 2 usage error (purge without --yes\n' +
    'when stdin is not a terminal), 3 backend unreachable.',
} as const satisfies CommandSpec;
