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
import { EXIT, UsageError } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { sandboxSpec } from '../specs/sandbox.ts';

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
export const command: Command = defineCommand(sandboxSpec, async ({ values }, io) => {
  const options: SandboxOptions = { port: values.port };
  if (values.host !== undefined) options.host = values.host;
  if (values['click-param'] !== undefined) options.clickParam = values['click-param'];
  if (values['return-window-days'] !== undefined)
    options.returnWindowDays = days(values['return-window-days']);
  if (values.variant !== undefined) options.variants = variants(values.variant);
  if (values['rate-limit'] !== undefined) options.faults = { rate_limit_per_s: values['rate-limit'] };
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
          faults: '--rate-limit',
        }[error.field] ?? `--${error.field}`;
      throw new UsageError(`${flag} ${error.message.replace(/^Invalid sandbox option '[^']*': /, '')}`);
    }
    throw error;
  }
  io.stdout(`postback sandbox listening on ${sandbox.url}\ncontrol API: ${sandbox.url}/_sandbox/\n`);
  const on = sandbox.options.variants;
  if (on.length > 0) io.stdout(`response variants: ${on.join(', ')}\n`);
  const limit = sandbox.options.faults.rate_limit_per_s;
  if (typeof limit === 'number') io.stdout(`rate limit: ${limit} requests per second per API key\n`);
  await new Promise<void>((resolve) => {
    if (io.signal.aborted) resolve();
    else io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await sandbox.close();
  io.stdout('postback sandbox stopped\n');
  return EXIT.ok;
});
