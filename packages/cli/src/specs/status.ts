/** The table of `postback status`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_USAGE, EXISTING_BACKEND_FLAGS } from './backend.ts';

export const statusSpec = {
  name: 'status',
  summary: 'Show jobs by state, oldest pending, nearest deadline, dead jobs',
  usage: [`postback status ${BACKEND_USAGE} [--json] [--dead N]`],
  description: 'Shows jobs by state, the oldest pending job, the nearest deadline and the first dead jobs.',
  env: BACKEND_ENV,
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    dead: { type: 'integer', value: 'N', help: 'how many dead jobs to show', default: 5 },
    json: { type: 'boolean', help: 'print one JSON object (shape in the README)' },
  },
  exitCodes: '0 ok, 2 usage error, 3 backend unreachable.',
} as const satisfies CommandSpec;
