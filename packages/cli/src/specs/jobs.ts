/** The table of `postback jobs`. */
import { DEFAULT_LIST_JOBS_LIMIT, MAX_LIST_JOBS_LIMIT } from '@postback/core';
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_USAGE, EXISTING_BACKEND_FLAGS } from './backend.ts';

export const jobsSpec = {
  name: 'jobs',
  summary: 'List jobs by state, reason, status, order, account, kind, deadline or age',
  usage: [
    `postback jobs ${BACKEND_USAGE} [--state S[,S]] [--reason REGEX] [--status CODE] [--order ID]`,
    '              [--account ID | --no-account] [--kind confirm|refund]',
    '              [--deadline-within DURATION] [--older-than DURATION]',
    '              [--limit N] [--offset N] [--json]',
  ],
  description:
    'Lists the jobs that match every filter given, most urgent first (nearest deadline first, jobs\n' +
    'without one last). Text: a table of id, order, account (- for none), kind, state, attempts,\n' +
    'deadline (ISO 8601 and time left) and last error (cut to the terminal width, else 80 characters).\n' +
    '--json: one JSON object per job and line (NDJSON). Without --account or --no-account, jobs of\n' +
    'every account are listed. DURATION is digits and a unit: 90m, 24h, 2d, 1h30m (units ms s m h d w).\n' +
    'SQS lists only dead jobs (its dead-letter queue); asking it for other states exits 2.',
  env: BACKEND_ENV,
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    state: {
      type: 'string',
      value: 'S[,S]',
      help: 'only jobs in these states: pending, inflight, delivered, dead, expired, cancelled',
    },
    reason: {
      type: 'string',
      value: 'REGEX',
      help: 'only jobs whose last error matches this JavaScript regular expression',
    },
    status: {
      type: 'integer',
      value: 'CODE',
      help: "only jobs whose last attempt got this HTTP status (the service's answer)",
      min: 100,
      max: 599,
    },
    order: {
      type: 'string',
      value: 'ID',
      help: 'only the jobs of this order id (in any account unless one is given)',
    },
    account: {
      type: 'string',
      value: 'ID',
      help: 'only the jobs of this advertiser account',
    },
    'no-account': { type: 'boolean', help: 'only the jobs without an account' },
    kind: {
      type: 'string',
      value: 'KIND',
      help: 'only confirm or refund jobs',
      choices: ['confirm', 'refund'],
    },
    'deadline-within': {
      type: 'duration',
      value: 'DURATION',
      help: 'only jobs whose deadline is at most this far from now (passed ones too)',
    },
    'older-than': {
      type: 'duration',
      value: 'DURATION',
      help: 'only jobs last changed at least this long ago',
    },
    limit: {
      type: 'integer',
      value: 'N',
      help: 'how many jobs to show',
      default: DEFAULT_LIST_JOBS_LIMIT,
      max: MAX_LIST_JOBS_LIMIT,
    },
    offset: { type: 'integer', value: 'N', help: 'jobs to skip (paging)', default: 0, min: 0 },
    json: { type: 'boolean', help: 'print one JSON object per job and line (NDJSON; shape in the README)' },
  },
  exitCodes:
    '0 ok (also when no job matches), 2 usage error or a state the backend cannot list, 3 backend unreachable.',
} as const satisfies CommandSpec;
