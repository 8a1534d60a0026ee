/** The table of `postback status`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_USAGE, EXISTING_BACKEND_FLAGS } from './backend.ts';

/**
 * The exit codes of `status --fail-on-*`, above the codes every command shares (0–5), so a cron line
 * alerts and tells why. When several conditions hold, the highest code wins (the order of urgency: no
 * worker, paused, deadlines at risk, dead jobs); `--json` lists them all in `alerts`.
 */
export const STATUS_EXIT = Object.freeze({
  /** `--fail-on-dead`: some job is dead. */
  dead: 10,
  /** `--fail-on-at-risk`: some open job's deadline is within `--at-risk-within`. */
  atRisk: 11,
  /**
   * `--fail-on-paused`: some worker seen is paused (the service refused the key or the address), some
   * account is paused by a worker (per-account keys: its key was refused or is missing), or some jobs are
   * held because their campaign is not on s2s (alert `jobs-held`).
   */
  paused: 12,
  /** `--fail-on-no-worker`: no running worker beat within `--worker-seen-within`. */
  noWorker: 14, // not 13: Node exits 13 on an unsettled top-level await
});

export const statusSpec = {
  name: 'status',
  summary: 'Show jobs by state, deadlines at risk, workers, pauses and dead jobs',
  usage: [
    `postback status ${BACKEND_USAGE} [--json] [--dead N] [--at-risk-within DURATION]`,
    '                [--worker-seen-within DURATION] [--fail-on-dead] [--fail-on-at-risk]',
    '                [--fail-on-paused] [--fail-on-no-worker]',
  ],
  description:
    'Shows jobs by state, the oldest pending job, the nearest deadline, how many open jobs have a\n' +
    'deadline within --at-risk-within, the workers that beat within --worker-seen-within (state, pause,\n' +
    'version, last seen), whether delivery is paused, the accounts paused by a worker (their key refused\n' +
    'or missing: their jobs wait, the others deliver), the jobs held because their campaign is not on\n' +
    's2s (one line per campaign, with the count and value held), and the first dead jobs. Times are ISO\n' +
    '8601, with the time relative to now. The --fail-on-* flags turn a condition into a non-zero exit\n' +
    'code, so a cron line is an alert. DURATION is digits and a unit: 90m, 24h, 2d (units ms s m h d w).',
  env: BACKEND_ENV,
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    dead: { type: 'integer', value: 'N', help: 'how many dead jobs to show', default: 5 },
    'at-risk-within': {
      type: 'duration',
      value: 'DURATION',
      help: 'count open jobs whose deadline is at most this far from now as at risk',
      default: '24h',
    },
    'worker-seen-within': {
      type: 'duration',
      value: 'DURATION',
      help: 'show workers whose last heart-beat is this recent (a worker beats every 30s)',
      default: '2m',
    },
    'fail-on-dead': { type: 'boolean', help: `exit ${STATUS_EXIT.dead} when any job is dead` },
    'fail-on-at-risk': {
      type: 'boolean',
      help: `exit ${STATUS_EXIT.atRisk} when any open job's deadline is within --at-risk-within`,
    },
    'fail-on-paused': {
      type: 'boolean',
      help: `exit ${STATUS_EXIT.paused} when a worker seen is paused or has paused an account, or jobs are held (campaign not on s2s)`,
    },
    'fail-on-no-worker': {
      type: 'boolean',
      help: `exit ${STATUS_EXIT.noWorker} when no running worker was seen within --worker-seen-within`,
    },
    json: { type: 'boolean', help: 'print one JSON object (shape in the README)' },
  },
  exitCodes:
    `0 ok, 2 usage error (also --fail-on-paused or --fail-on-no-worker on a backend without\n` +
    `heart-beats), 3 backend unreachable, ${STATUS_EXIT.dead} dead jobs (--fail-on-dead), ${STATUS_EXIT.atRisk} deadlines at risk\n` +
    `(--fail-on-at-risk), ${STATUS_EXIT.paused} a worker or an account paused, or jobs held (--fail-on-paused), ${STATUS_EXIT.noWorker} no worker (--fail-on-no-worker);\n` +
    'when several hold, the highest.',
} as const satisfies CommandSpec;
