/**
 * `postback sandbox`: runs the local emulator of the ad service (`@postback/sandbox`) until SIGINT or
 * SIGTERM, for demos, manual tests and users' CI.
 */
import {
  type RunningSandbox,
  SANDBOX_VARIANTS,
  type SandboxOptions,
  SandboxOptionsError,
  type SandboxVariant,
  startSandbox,
} from '@postback/sandbox';
import { EXIT, HELP_OPTION, parseFlags, runGuarded, UsageError } from '../args.ts';
import type { Command } from '../main.ts';

/**
 * Port of `postback sandbox` when `--port` is not given.
 * @defaultValue 4010
 */
export const DEFAULT_SANDBOX_CLI_PORT = 4010;

const HELP = `Usage: postback sandbox [--port N] [--host HOST] [--click-param NAME] [--return-window-days N]
                        [--variant NAME[,NAME...]]...

Runs a local emulator of the ad service: every /v1 endpoint and rule, a controllable clock, fault
injection, and a control API under /_sandbox/ (see the @postback/sandbox README). Stops on Ctrl-C.

Options:
  --port N                  port to listen on (default ${DEFAULT_SANDBOX_CLI_PORT}; 0 picks a free one)
  --host HOST               interface to bind (default 127.0.0.1)
  --click-param NAME        query parameter of the click token on landing URLs (default click_token)
  --return-window-days N    days a confirmed order may be reversed (default 30)
  --variant NAME            answer like a service that differs from the default shapes; repeatable or
                            comma-separated: ${SANDBOX_VARIANTS.join(', ')}
                            (see the README; change at run time with POST /_sandbox/variants)
  -h, --help                show this help

Exit codes: 0 stopped by a signal, 1 could not listen, 2 usage error.
`;

function port(value: string | undefined): number {
  if (value === undefined) return DEFAULT_SANDBOX_CLI_PORT;
  if (!/^\d+$/.test(value) || Number(value) > 65_535)
    throw new UsageError(`--port must be an integer 0..65535, got '${value}'`);
  return Number(value);
}

/** `--variant` values, each possibly comma-separated, as one list of known variant names (canonical order). */
function variants(values: readonly string[]): SandboxVariant[] {
  const names = values.flatMap((v) => v.split(',')).map((v) => v.trim());
  for (const name of names) {
    if (!(SANDBOX_VARIANTS as readonly string[]).includes(name)) {
      throw new UsageError(`--variant: unknown variant '${name}'; known: ${SANDBOX_VARIANTS.join(', ')}`);
    }
  }
  return SANDBOX_VARIANTS.filter((v) => names.includes(v)); // canonical order, each once
}

function days(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`--return-window-days must be a positive number, got '${value}'`);
  }
  return n;
}

/**
 * The `sandbox` command.
 *
 * @example
 * ```ts
 * await command.run(['--port', '4010'], io); // resolves with 0 once io.signal aborts
 * ```
 */
export const command: Command = {
  summary: 'Run the local sandbox of the ad service',
  run: (args, io) =>
    runGuarded('sandbox', io, async () => {
      const { values } = parseFlags(args, {
        ...HELP_OPTION,
        port: { type: 'string' },
        host: { type: 'string' },
        'click-param': { type: 'string' },
        'return-window-days': { type: 'string' },
        variant: { type: 'string', multiple: true },
      });
      if (values.help) {
        io.stdout(HELP);
        return EXIT.ok;
      }
      const options: SandboxOptions = { port: port(values.port) };
      if (values.host !== undefined) options.host = values.host;
      if (values['click-param'] !== undefined) options.clickParam = values['click-param'];
      if (values['return-window-days'] !== undefined)
        options.returnWindowDays = days(values['return-window-days']);
      if (values.variant !== undefined) options.variants = variants(values.variant);
      let sandbox: RunningSandbox;
      try {
        sandbox = await startSandbox(options);
      } catch (error) {
        if (error instanceof SandboxOptionsError) {
          const flag =
            {
              clickParam: '--click-param',
              returnWindowDays: '--return-window-days',
              variants: '--variant',
            }[error.field] ?? `--${error.field}`;
          throw new UsageError(`${flag} ${error.message.replace(/^Invalid sandbox option '[^']*': /, '')}`);
        }
        throw error;
      }
      io.stdout(`postback sandbox listening on ${sandbox.url}\ncontrol API: ${sandbox.url}/_sandbox/\n`);
      const on = sandbox.options.variants;
      if (on.length > 0) io.stdout(`response variants: ${on.join(', ')}\n`);
      await new Promise<void>((resolve) => {
        if (io.signal.aborted) resolve();
        else io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await sandbox.close();
      io.stdout('postback sandbox stopped\n');
      return EXIT.ok;
    }),
};
