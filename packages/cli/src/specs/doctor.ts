/** The table of `postback doctor`. */
import { CHECK_NAMES } from '../doctor/types.ts';
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, EXISTING_BACKEND_FLAGS } from './backend.ts';

/**
 * The exit code of `postback doctor` when a check failed: above the codes every command shares (0–5) and
 * `status`'s alerts (10–12, 14); not 13, which Node uses for an unsettled top-level await.
 */
export const DOCTOR_EXIT_FAILED = 15;

export const doctorSpec = {
  name: 'doctor',
  summary: 'Check the address, key, clock, campaigns, outbox, worker and secret',
  usage: [
    'postback doctor [--db FILE | --pg URL [--schema NAME] | --sqs URL] [--base-url URL] [--skip CHECK]... [--json]',
  ],
  description:
    'Checks, one line each with what to do about a failure:\n' +
    '  base-url        the address answers like the ad service (a request without a key gets its 401)\n' +
    '  key             POSTBACK_API_KEY is accepted and has the conversions scope\n' +
    "  clock           this host's clock agrees with the service's Date within the safety margin\n" +
    "  campaigns       no campaign of the service's list is on pixel billing (needs the read scope)\n" +
    "  recent-answers  no campaign named by the outbox's recent answers is off s2s\n" +
    '  outbox          the outbox opens, is migrated and answers\n' +
    '  worker          a worker beat within --worker-seen-within and is not paused\n' +
    '  secret          POSTBACK_SECRET is at least 32 characters\n' +
    'Nothing is written and nothing is charged: it reads, asks once without a key, and reverses an order\n' +
    'that does not exist (404 with the conversions scope, 403 without). The key and the secret are never\n' +
    'printed. A skipped check (asked, or what it needs is missing) is not a failure.',
  env: [
    { name: 'POSTBACK_API_KEY', help: 'the API key to check' },
    { name: 'POSTBACK_SECRET', help: 'the cookie secret to check (never printed)' },
    ...BACKEND_ENV,
  ],
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    db: { ...EXISTING_BACKEND_FLAGS.db, env: 'POSTBACK_DB' },
    pg: { ...EXISTING_BACKEND_FLAGS.pg, env: 'POSTBACK_PG' },
    sqs: { ...EXISTING_BACKEND_FLAGS.sqs, env: 'POSTBACK_SQS' },
    'base-url': {
      type: 'string',
      value: 'URL',
      help: "the service's base URL (http or https)",
      required: true,
      env: 'POSTBACK_API_URL',
    },
    skip: {
      type: 'string',
      value: 'CHECK',
      multiple: true,
      help: `a check not to run (repeatable, or comma-separated): ${CHECK_NAMES.join(', ')}`,
    },
    'worker-seen-within': {
      type: 'duration',
      value: 'DURATION',
      help: 'a worker whose last heart-beat is older does not count as live',
      default: '2m',
    },
    json: {
      type: 'boolean',
      help: 'print {"ok": bool, "checks": [{"name", "ok", "status", "detail", "fix"}]}',
    },
  },
  exitCodes: `0 every check passed (or was skipped), ${DOCTOR_EXIT_FAILED} some check failed, 2 usage error.`,
} as const satisfies CommandSpec;
