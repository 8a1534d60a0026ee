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
  usage: [`postback dashboard ${BACKEND_USAGE} [--port N] [--host HOST] [--token-env NAME]`],
  description:
    'Serves the @postback/dashboard page over the outbox: jobs by state, open jobs by time left to their\n' +
    'deadline, dead jobs grouped by reason, the job list and each job with its attempts. Read-only unless\n' +
    '--token-env names a variable holding a token (at least 16 characters): the operator pastes it in the\n' +
    'page to replay or purge dead jobs. The token is read from the environment, never from a flag, so it\n' +
    'stays out of `ps`. Listens on 127.0.0.1 unless --host says otherwise. Stops on Ctrl-C.',
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
    host: { type: 'string', value: 'HOST', help: 'interface to bind', default: '127.0.0.1' },
    'token-env': {
      type: 'string',
      value: 'NAME',
      help: 'environment variable holding the token that enables replay and purge\n(none: read-only)',
    },
  },
  exitCodes: '0 stopped by a signal, 1 could not listen, 2 usage error, 3 backend unreachable.',
} as const satisfies CommandSpec;
