/** The table of `postback job`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_USAGE, EXISTING_BACKEND_FLAGS } from './backend.ts';

export const jobSpec = {
  name: 'job',
  summary: 'Show one job whole, with its attempt history',
  usage: [
    `postback job ${BACKEND_USAGE} ID [--json]`,
    `postback job ${BACKEND_USAGE} --order ORDER [--json]`,
  ],
  description:
    'Shows one job (by id) or both jobs of an order (its confirmation and its refund): state, kind,\n' +
    'order, campaign, attempts, when it was created and last changed, its next attempt, its deadline and\n' +
    'the time left, when a request may have been applied, its last error, and every recorded attempt\n' +
    '(oldest first: start time, duration, outcome, HTTP status, detail). Times are ISO 8601, with the\n' +
    'time relative to now in text output.',
  positionals: true,
  env: BACKEND_ENV,
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    order: { type: 'string', value: 'ORDER', help: 'show the jobs of this order instead of one id' },
    json: { type: 'boolean', help: 'print one JSON object (shape in the README)' },
  },
  exitCodes: '0 ok, 1 no such job (or no job for the order), 2 usage error, 3 backend unreachable.',
} as const satisfies CommandSpec;
