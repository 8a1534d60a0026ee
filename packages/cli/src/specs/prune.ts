/** The table of `postback prune`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, EXISTING_BACKEND_FLAGS } from './backend.ts';

/**
 * How long final jobs are kept by `postback prune` and by the worker's scheduled prune.
 * @defaultValue 30d
 */
export const DEFAULT_PRUNE_OLDER_THAN = '30d';

const { sqs: _sqs, ...SQL_BACKEND_FLAGS } = EXISTING_BACKEND_FLAGS;

export const pruneSpec = {
  name: 'prune',
  summary: 'Delete old delivered, cancelled and expired jobs (retention)',
  usage: [
    'postback prune (--db FILE | --pg URL [--schema NAME]) [--older-than DURATION] [--return-window DURATION] [--dry-run] [--json]',
  ],
  description:
    'Deletes final jobs (delivered, cancelled, expired) last changed longer ago than --older-than, and\n' +
    'the clicks of the click store older than the confirmation window. A job is never deleted before its\n' +
    'deadline, and a charged confirmation not before its return window has closed (a refund still finds\n' +
    'its campaign). Dead jobs are never pruned: see `postback dlq purge`. SQS keeps no final jobs.\n' +
    'The worker prunes on its own every hour (`worker --prune-every`).',
  env: BACKEND_ENV,
  flags: {
    ...SQL_BACKEND_FLAGS,
    'older-than': {
      type: 'duration',
      value: 'DURATION',
      help: 'delete final jobs last changed longer ago than this (90m, 12h, 30d)',
      default: DEFAULT_PRUNE_OLDER_THAN,
    },
    'return-window': {
      type: 'duration',
      value: 'DURATION',
      help: "how long a charged confirmation is kept for refunds (default: the store's\npolicy: its return window, or 400d with none configured)",
    },
    'dry-run': { type: 'boolean', help: 'count what would be deleted, delete nothing' },
    json: { type: 'boolean', help: 'print one JSON object: {"pruned": N, "clicks": N, ...}' },
  },
  exitCodes: '0 ok, 2 usage error, 3 backend unreachable.',
} as const satisfies CommandSpec;
