/** The table of `postback sandbox`. */
import { MAX_RATE_LIMIT_PER_S, SANDBOX_VARIANTS } from '@postback/sandbox';
import type { CommandSpec } from '../spec.ts';

/**
 * Port of `postback sandbox` when `--port` is not given.
 * @defaultValue 4010
 */
export const DEFAULT_SANDBOX_CLI_PORT = 4010;

export const sandboxSpec = {
  name: 'sandbox',
  summary: 'Run the local sandbox of the ad service',
  usage: [
    'postback sandbox [--port N] [--host HOST] [--click-param NAME] [--return-window-days N]',
    '                 [--rate-limit N] [--variant NAME[,NAME...]]...',
  ],
  description:
    'Runs a local emulator of the ad service: every /v1 endpoint and rule, a controllable clock, fault\n' +
    'injection, and a control API under /_sandbox/ (see the @postback/sandbox README). Stops on Ctrl-C.',
  flags: {
    port: {
      type: 'integer',
      value: 'N',
      help: 'port to listen on (0 picks a free one)',
      default: DEFAULT_SANDBOX_CLI_PORT,
      min: 0,
      max: 65_535,
    },
    host: { type: 'string', value: 'HOST', help: 'interface to bind (default 127.0.0.1)' },
    'click-param': {
      type: 'string',
      value: 'NAME',
      help: 'query parameter of the click token on landing URLs (default click_token)',
    },
    'return-window-days': {
      type: 'string',
      value: 'N',
      help: 'days a confirmed order may be reversed, a positive number (default 30)',
    },
    'rate-limit': {
      type: 'integer',
      value: 'N',
      help:
        'at most N /v1 requests per second per API key; more answer 429 with Retry-After\n' +
        '(change at run time with POST /_sandbox/faults {"rate_limit_per_s": N})',
      min: 1,
      max: MAX_RATE_LIMIT_PER_S,
    },
    variant: {
      type: 'string',
      value: 'NAME',
      multiple: true,
      help:
        'answer like a service that differs from the default shapes, comma-separated:\n' +
        `${SANDBOX_VARIANTS.join(', ')}\n` +
        '(see the README; change at run time with POST /_sandbox/variants)',
    },
  },
  exitCodes: '0 stopped by a signal, 1 could not listen, 2 usage error.',
} as const satisfies CommandSpec;
