/** The table of `postback worker`. */
import type { CommandSpec } from '../spec.ts';
import { tuningFlag } from '../worker-options.ts';
import { BACKEND_ENV, BACKEND_FLAGS, BACKEND_USAGE } from './backend.ts';
import { DEFAULT_PRUNE_OLDER_THAN } from './prune.ts';

/**
 * How often the worker prunes old final jobs and sweeps old clicks (`--prune-every`).
 * @defaultValue 1h
 */
export const DEFAULT_PRUNE_EVERY = '1h';

/**
 * How often the worker logs its `worker.summary` line at info (`--summary-every`).
 * @defaultValue 1m
 */
export const DEFAULT_SUMMARY_EVERY = '1m';

/**
 * How long a graceful shutdown waits for in-flight sends before releasing them.
 * @defaultValue 30_000
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

/** The worker's flags. */
export const workerSpec = {
  name: 'worker',
  summary: 'Deliver queued jobs to the ad service until SIGTERM/SIGINT',
  usage: [`postback worker ${BACKEND_USAGE} [--base-url URL] [options]`],
  description:
    'Delivers queued confirmations and refunds to the ad service until SIGTERM or SIGINT, then stops\n' +
    'gracefully (in-flight sends finish or are given back; nothing is left inflight). The API key is\n' +
    'never printed. Logs go to stderr. Every option may be set by a variable instead (see Environment).\n' +
    "Many advertisers: a job with an account is sent with that account's key (--keys-file, or\n" +
    'POSTBACK_API_KEY__<ACCOUNT>); a refused or missing key pauses that account only. Jobs without an\n' +
    'account use POSTBACK_API_KEY, which may then be left unset.',
  env: [
    {
      name: 'POSTBACK_API_KEY',
      help: 'the API key (of jobs without an account; required unless per-account keys are given)',
    },
    {
      name: 'POSTBACK_API_KEY__<ACCOUNT>',
      help: 'the key of one account, named verbatim after the two underscores (the keys file wins)',
    },
    ...BACKEND_ENV,
  ],
  flagEnv: true,
  flags: {
    ...BACKEND_FLAGS,
    'base-url': {
      type: 'string',
      value: 'URL',
      help: "the service's base URL (http or https)",
      required: true,
      env: 'POSTBACK_API_URL',
    },
    'keys-file': {
      type: 'string',
      value: 'FILE',
      help:
        'JSON object of account → API key ({"shop-17": "pbsk_..."}), read again\n' +
        'whenever it changes (no restart); a version that does not parse keeps the last keys',
    },
    // The tuning flags: each is an option of the Dispatcher or the client (worker-options.ts), with the
    // default, bounds and checks of that option's schema.
    'auth-pause-ms': tuningFlag(
      'auth-pause-ms',
      'how long a refused key (401/403) pauses delivery, or its account, before one job\nprobes it again',
    ),
    concurrency: tuningFlag('concurrency', 'sends in flight at once'),
    'batch-size': tuningFlag('batch-size', 'most jobs claimed at once'),
    'lease-ms': tuningFlag(
      'lease-ms',
      'how long a claim holds before another worker may take the job\n(renewed while a send runs)',
    ),
    'poll-ms': tuningFlag('poll-ms', 'how often to look for due jobs when idle'),
    'backoff-base-ms': tuningFlag(
      'backoff-base-ms',
      "first retry delay ceiling, doubling per attempt, full jitter; never past a job's\ndeadline",
    ),
    'backoff-max-ms': tuningFlag('backoff-max-ms', 'largest retry delay ceiling'),
    'backoff-min-ms': tuningFlag('backoff-min-ms', 'shortest retry delay, also after Retry-After: 0'),
    'request-timeout-ms': tuningFlag('request-timeout-ms', 'timeout of one HTTP request'),
    pace: {
      type: 'string',
      value: 'adaptive|off',
      help:
        'off: always --concurrency sends in flight (a dedicated worker); adaptive: fewer\n' +
        'while the event loop is busy, as an in-process Dispatcher does (Dispatcher option pace)',
      choices: ['adaptive', 'off'],
      default: 'off',
    },
    'max-requests-per-second': {
      type: 'integer',
      value: 'N',
      min: 1,
      max: 100_000,
      help: 'keep all sends below N a second, spaced evenly, for a service whose limit is\nknown (Dispatcher option maxRequestsPerSecond.total; default: none, 429s teach a rate)',
    },
    'on-switch': {
      type: 'string',
      value: 'ask|send|drop',
      help:
        'what orders held for a campaign not on s2s get once it accepts s2s: ask (wait for\n' +
        "'postback held send|drop': the pixel may have billed them), send (no pixel), drop (the\n" +
        'pixel billed them) (Dispatcher option onSwitch)',
      choices: ['ask', 'send', 'drop'],
      default: 'ask',
    },
    'max-requests-per-second-per-account': {
      type: 'integer',
      value: 'N',
      min: 1,
      max: 100_000,
      help: "keep each account's sends below N a second (maxRequestsPerSecond.perAccount)",
    },
    'shutdown-timeout-ms': {
      type: 'integer',
      value: 'N',
      help: 'how long a graceful stop waits for in-flight sends',
      default: DEFAULT_SHUTDOWN_TIMEOUT_MS,
    },
    'sqs-wait-seconds': {
      type: 'integer',
      value: 'N',
      min: 0,
      max: 20,
      help:
        '--sqs: long-poll wait of a claim on an empty queue, 0..20 seconds (default: the\n' +
        "SQS outbox's waitTimeSeconds; 1 at most after a claim that received jobs)",
    },
    drain: {
      type: 'boolean',
      help: 'exit once no job is due (or delivery is paused), instead of waiting\nfor a signal',
    },
    'rate-limit-wait': {
      type: 'duration',
      value: 'DURATION',
      off: true,
      help:
        "--drain: wait out a 429's pause (its Retry-After) up to this long in all, and never\n" +
        "past an open job's deadline; a longer one ends the run, exit 6 (default 5m;\n0 or off: never wait)",
    },
    'prune-every': {
      type: 'duration',
      value: 'DURATION',
      off: true,
      help: 'prune old final jobs and sweep old clicks at start, then this often\n(0 or off: never; see `postback prune`)',
      default: DEFAULT_PRUNE_EVERY,
    },
    'prune-older-than': {
      type: 'duration',
      value: 'DURATION',
      help: 'what the scheduled prune deletes: final jobs last changed longer ago',
      default: DEFAULT_PRUNE_OLDER_THAN,
    },
    'return-window': {
      type: 'duration',
      value: 'DURATION',
      help: "the scheduled prune keeps a charged confirmation this long for refunds\n(default: the store's policy: its return window, or 400d with none configured)",
    },
    'summary-every': {
      type: 'duration',
      value: 'DURATION',
      off: true,
      help: 'log a worker.summary line at info this often (0 or off: never)',
      default: DEFAULT_SUMMARY_EVERY,
    },
    'log-level': {
      type: 'string',
      value: 'LEVEL',
      help: 'trace, debug (one line per delivery), info, warn, error or fatal',
      choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal'],
      default: 'info',
    },
    log: {
      type: 'string',
      value: 'text|json',
      help: "log format on stderr: text, or JSON lines in pino's format",
      choices: ['text', 'json'],
      default: 'text',
    },
    'metrics-port': {
      type: 'integer',
      value: 'N',
      min: 0,
      max: 65_535,
      help:
        'serve /metrics (Prometheus), /healthz and /readyz on this port while the\n' +
        'worker runs (0: a free port, logged as worker.metrics)',
    },
    'metrics-host': {
      type: 'string',
      value: 'HOST',
      help: 'interface of the metrics server (with --metrics-port)',
      default: '127.0.0.1',
    },
  },
  exitCodes:
    '0 stopped gracefully (sends still running at the timeout are released to pending),\n' +
    '1 the worker failed (a store error, a stop that could not finish, an unexpected error),\n' +
    '2 usage error (bad flag, missing POSTBACK_API_KEY or base URL, a keys file that cannot be read),\n' +
    '3 backend unreachable, 4 (--drain) delivery paused: the service refused the API key (401/403),\n' +
    '  or some account is paused (its key refused or missing; its jobs are left pending),\n' +
    "5 (--drain) delivery paused: answers that are not the service's (wrong base URL or proxy),\n" +
    '6 (--drain) rate-limited (429) longer than --rate-limit-wait or past a deadline: jobs left\n' +
    '  pending for the next run ("rate-limited until <ISO time>").',
} as const satisfies CommandSpec;
