/** The table of `postback worker`. */
import { DEFAULT_TIMEOUT_MS } from '@postback/client';
import {
  DEFAULT_BACKOFF,
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  DEFAULT_POLL_INTERVAL_MS,
} from '@postback/core';
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_FLAGS, BACKEND_USAGE } from './backend.ts';

/**
 * How long a graceful shutdown waits for in-flight sends before releasing them.
 * @defaultValue 30_000
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

/** The worker's flags. Tuning flags without a `default` leave the Dispatcher's (or client's) own default. */
export const workerSpec = {
  name: 'worker',
  summary: 'Deliver queued jobs to the ad service until SIGTERM/SIGINT',
  usage: [`postback worker ${BACKEND_USAGE} [--base-url URL] [options]`],
  description:
    'Delivers queued confirmations and refunds to the ad service until SIGTERM or SIGINT, then stops\n' +
    'gracefully (in-flight sends finish or are given back; nothing is left inflight). The API key is\n' +
    'never printed.',
  env: [{ name: 'POSTBACK_API_KEY', help: 'the API key', required: true }, ...BACKEND_ENV],
  flags: {
    ...BACKEND_FLAGS,
    'base-url': {
      type: 'string',
      value: 'URL',
      help: "the service's base URL (http or https)",
      required: true,
      env: 'POSTBACK_API_URL',
    },
    concurrency: {
      type: 'integer',
      value: 'N',
      help: `sends in flight at once (Dispatcher default ${DEFAULT_CONCURRENCY})`,
    },
    'lease-ms': {
      type: 'integer',
      value: 'N',
      help:
        'how long a claim holds before another worker may take the job\n' +
        `(Dispatcher default ${DEFAULT_LEASE_MS}; renewed while a send runs)`,
    },
    'poll-ms': {
      type: 'integer',
      value: 'N',
      help: `how often to look for due jobs when idle (Dispatcher default ${DEFAULT_POLL_INTERVAL_MS})`,
    },
    'backoff-base-ms': {
      type: 'integer',
      value: 'N',
      help:
        'first retry delay ceiling, doubling per attempt, full jitter\n' +
        `(Dispatcher default ${DEFAULT_BACKOFF.baseMs}); never past a job's deadline`,
    },
    'backoff-max-ms': {
      type: 'integer',
      value: 'N',
      help: `largest retry delay ceiling (Dispatcher default ${DEFAULT_BACKOFF.maxMs})`,
    },
    'backoff-min-ms': {
      type: 'integer',
      value: 'N',
      help: `shortest retry delay, also after Retry-After: 0 (Dispatcher default ${DEFAULT_BACKOFF.minMs})`,
    },
    'request-timeout-ms': {
      type: 'integer',
      value: 'N',
      help: `timeout of one HTTP request (client default ${DEFAULT_TIMEOUT_MS})`,
    },
    'shutdown-timeout-ms': {
      type: 'integer',
      value: 'N',
      help: 'how long a graceful stop waits for in-flight sends',
      default: DEFAULT_SHUTDOWN_TIMEOUT_MS,
    },
    drain: {
      type: 'boolean',
      help: 'exit once no job is due (or delivery is paused), instead of waiting\nfor a signal',
    },
    log: {
      type: 'string',
      value: 'text|json',
      help: 'log format',
      choices: ['text', 'json'],
      default: 'text',
    },
  },
  exitCodes:
    '0 stopped gracefully (sends still running at the timeout are released to pending),\n' +
    '1 the worker failed (a store error, a stop that could not finish, an unexpected error),\n' +
    '2 usage error (bad flag, missing POSTBACK_API_KEY or base URL), 3 backend unreachable,\n' +
    '4 (--drain) delivery paused: the service refused the API key (401/403),\n' +
    "5 (--drain) delivery paused: answers that are not the service's (wrong base URL or proxy).",
} as const satisfies CommandSpec;
