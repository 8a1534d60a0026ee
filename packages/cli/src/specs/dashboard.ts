/** The table of `postback dashboard`. */
import type { CommandSpec } from '../spec.ts';
import { BACKEND_ENV, BACKEND_USAGE, EXISTING_BACKEND_FLAGS } from './backend.ts';

/**
 * Port of `postback dashboard` when `--port` is not given.
 * @defaultValue 4020
 */
export const DEFAULT_DASHBOARD_PORT = 4020;

export const dashboardSpec = {
  name: 'dashboard',
  summary: 'Serve the web dashboard: jobs by state, deadlines at risk, dead jobs, replay',
  usage: [
    `postback dashboard ${BACKEND_USAGE} [--port N] [--host HOST] [--token-env NAME]`,
    '                   [--allow-host NAME]... [--worker-seen-within DURATION]',
  ],
  description:
    'Serves the @postback/dashboard page over the outbox: jobs by state, open jobs by time left to their\n' +
    'deadline, delivered and failed jobs over the last hour, dead jobs grouped by reason, the job list and\n' +
    'each job with its attempts; it redraws itself every few seconds, and warns when open jobs wait and no\n' +
    'worker delivers them. Read-only unless --token-env names a variable holding a token (at least 16\n' +
    'characters): the operator pastes it in the page to replay or purge the dead jobs shown. The token is\n' +
    'read from the environment, never from a flag, so it stays out of `ps`; wrong tokens are throttled per\n' +
    'client address.\n' +
    '\n' +
    'Listens on 127.0.0.1 unless --host says otherwise. On loopback it answers only to the Host names\n' +
    'localhost, 127.0.0.1 and [::1] (and those given with --allow-host), so a web page cannot read it\n' +
    'through DNS rebinding. Bound beyond loopback (--host 0.0.0.0), it needs --token-env, and every read\n' +
    'needs the token too: the page asks for it before it shows any job. Stops on Ctrl-C.',
  env: BACKEND_ENV,
  flags: {
    ...EXISTING_BACKEND_FLAGS,
    port: {
      type: 'integer',
      value: 'N',
      help: 'port to listen on (0 picks a free one)',
      default: DEFAULT_DASHBOARD_PORT,
      min: 0,
      max: 65_535,
    },
    host: {
      type: 'string',
      value: 'HOST',
      help: 'interface to bind; beyond loopback, --token-env is required and reads\nneed the token',
      default: '127.0.0.1',
    },
    'token-env': {
      type: 'string',
      value: 'NAME',
      help: 'environment variable holding the token that enables replay and purge\n(none: read-only)',
    },
    'allow-host': {
      type: 'string',
      value: 'NAME',
      multiple: true,
      help: "a Host name the dashboard also answers to (a reverse proxy's name;\nrepeatable)",
    },
    'worker-seen-within': {
      type: 'duration',
      value: 'DURATION',
      help: 'warn when open jobs wait and no worker beat this recently',
      default: '2m',
    },
  },
  exitCodes: '0 stopped by a signal, 1 could not listen, 2 usage error, 3 backend unreachable.',
} as const satisfies CommandSpec;
