/** The table of `postback enqueue`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_FLAGS, BACKEND_USAGE } from './backend.ts';

/** How many errors the JSON summary keeps (text mode streams every one to stderr). */
export const MAX_REPORTED_ERRORS = 100;

export const enqueueSpec = {
  name: 'enqueue',
  summary: 'Enqueue many jobs from a JSON-lines file or stdin',
  usage: [
    `postback enqueue ${BACKEND_USAGE} --from FILE|- [--json]`,
    'postback enqueue --from FILE|- --dry-run [--json]',
  ],
  description:
    "Enqueues jobs from a file of JSON lines ('-' reads stdin), one object per line:\n" +
    '  {"kind":"confirm","click_token":"...","order_id":"...","value_micros":1990000,"clicked_at":"2026-01-02T03:04:05Z"}\n' +
    '  {"kind":"refund","order_id":"...","campaign_id":"cmp_..."}        (campaign_id optional)\n' +
    'clicked_at is ISO 8601 with a zone, or epoch milliseconds. Either kind may carry "account":"ID",\n' +
    'the advertiser account of the order (absent or null: none; an order is its account and its id).\n' +
    'Blank lines are ignored.\n\n' +
    "Each bad line is reported on stderr as 'line N: FIELD: reason' and skipped; the rest are enqueued.\n" +
    'The summary counts the confirmations still inside their window (deadline: click + 7 days less the\n' +
    'safety margin) and those already past it, which are lost (never sent), with their value.\n' +
    '--dry-run reads and checks every line, prints the same summary, and writes nothing (opens no backend).',
  env: BACKEND_ENV,
  flags: {
    ...BACKEND_FLAGS,
    from: {
      type: 'string',
      value: 'FILE|-',
      help: "the file of JSON lines, or '-' for stdin",
      required: true,
    },
    json: {
      type: 'boolean',
      help: `print one summary object instead (the first ${MAX_REPORTED_ERRORS} errors in "errors")`,
    },
    'dry-run': {
      type: 'boolean',
      help: 'check the lines and count their windows; write nothing, create no database',
    },
  },
  exitCodes:
    '0 all lines enqueued (or already there), 1 some line was bad, 2 usage error or missing file,\n' +
    '3 backend unreachable.',
} as const satisfies CommandSpec;
