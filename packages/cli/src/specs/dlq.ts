/** The table of `postback dlq`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_USAGE, EXISTING_BACKEND_FLAGS } from './backend.ts';

/**
 * How many dead jobs `dlq list` shows when `--limit` is not given. (Not a table default: `replay` and
 * `purge` refuse `--limit`, so the flag must stay unset unless the user gave it.)
 * @defaultValue 50
 */
export const DEFAULT_DLQ_LIMIT = 50;

export const dlqSpec = {
  name: 'dlq',
  summary: 'List, replay or purge dead jobs',
  usage: [
    `postback dlq list   ${BACKEND_USAGE} [--limit N] [--after ID] [--json]`,
    `postback dlq replay ${BACKEND_USAGE} (--id ID ... | --all) [--json]`,
    `postback dlq purge  ${BACKEND_USAGE} (--id ID ... | --all) [--json]`,
  ],
  description:
    'list     dead jobs with their reasons, oldest first\n' +
    'replay   put dead jobs back to pending, due now, attempts reset; a job past its deadline becomes\n' +
    '         expired instead (never sent late) and is listed as such, as is a dead confirmation cancelled\n' +
    '         because its order was refunded. Shows a progress bar on a terminal.\n' +
    'purge    delete dead jobs',
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
    json: { type: 'boolean', help: 'print one JSON object (shapes in the README)' },
  },
  exitCodes: '0 ok, 1 some --id was not a dead job, 2 usage error, 3 backend unreachable.',
} as const satisfies CommandSpec;
