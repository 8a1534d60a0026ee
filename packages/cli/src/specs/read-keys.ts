/**
 * The flags and variables of a command that reads the service with keys of the read scope (`shadow`,
 * `held`): the base URL, the keys, and the variables they come from. One table, so the commands say it
 * alike.
 */
import type { EnvSpec, FlagTable } from '../spec.ts';

/** The variables of the read keys. */
export const READ_KEY_ENV: readonly EnvSpec[] = [
  {
    name: 'POSTBACK_API_KEY',
    help: 'a key with the read scope, for the spend (of the jobs without an account)',
  },
  { name: 'POSTBACK_API_KEY__<ACCOUNT>', help: 'the read key of one account (the keys file wins)' },
];

/** `--base-url` and `--keys-file`, for the actions named by `actions` (e.g. `list`). */
export function readKeyFlags(actions: string) {
  return {
    'base-url': {
      type: 'string',
      value: 'URL',
      help: `${actions}: the service's base URL, for the spend (with a read key)`,
      env: 'POSTBACK_API_URL',
    },
    'keys-file': {
      type: 'string',
      value: 'FILE',
      env: 'POSTBACK_KEYS_FILE',
      help: 'JSON object of account → API key (read keys), as the worker reads it',
    },
  } as const satisfies FlagTable;
}
