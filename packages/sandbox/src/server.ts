/**
 * `startSandbox`: validates the options, wires state, clock and faults to a plain `node:http` server,
 * and returns its URL, a control-API client and `close()`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SandboxClock } from './clock.ts';
import type { SandboxCore } from './context.ts';
import type { SandboxControl } from './control-client.ts';
import { createSandboxControl } from './control-client.ts';
import { FaultInjector, parseFaultConfig } from './faults.ts';
import { createRequestListener } from './http/handler.ts';
import { answerMalformedRequests } from './http/malformed.ts';
import type { ResolvedSandboxOptions, SandboxOptions } from './options.ts';
import { resolveSandboxOptions } from './options.ts';
import { RequestLog } from './request-log.ts';
import { SandboxState } from './state.ts';
import { VariantSet } from './variants.ts';

/**
 * A running sandbox.
 * @example
 * ```ts
 * await using sandbox = await startSandbox();
 * ```
 */
export interface RunningSandbox {
  /** Base URL, e.g. `http://127.0.0.1:4010` (pass it as the client's `baseUrl`). */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** The options in effect, defaults filled in. */
  readonly options: Readonly<ResolvedSandboxOptions>;
  /** Typed client of the control API of this sandbox. */
  readonly control: SandboxControl;
  /** Current sandbox time (epoch ms). */
  now(): number;
  /** Moves the sandbox clock forward by `ms`, in process (same as `POST /_sandbox/clock`). */
  advance(ms: number): number;
  /** Stops listening and closes every connection, including idle keep-alive ones. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Starts a sandbox of the ad service.
 *
 * @throws `SandboxOptionsError` for an unknown or invalid option; the listen error (e.g. EADDRINUSE)
 * @example
 * ```ts
 * const sandbox = await startSandbox();
 * const { keys } = await sandbox.control.createAccount();
 * const client = createClient({ baseUrl: sandbox.url, apiKey: keys.all });
 * await sandbox.close();
 * ```
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const resolved = resolveSandboxOptions(options);
  const core: SandboxCore = {
    state: new SandboxState(),
    clock: new SandboxClock(resolved.now),
    faults: new FaultInjector(resolved.random),
    variants: new VariantSet(resolved.variants),
    requests: new RequestLog(resolved.requestLogSize),
    options: resolved,
  };
  core.faults.set(parseFaultConfig(resolved.faults));
  // The handler answers a request without Host itself (a JSON 400, like every other refusal).
  const server = createServer({ keepAlive: true, requireHostHeader: false }, createRequestListener(core));
  answerMalformedRequests(server, core.clock);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(resolved.port, resolved.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${urlHost(resolved.host)}:${port}`;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  return {
    url,
    port,
    host: resolved.host,
    options: resolved,
    control: createSandboxControl(url),
    now: () => core.clock.now(),
    advance: (ms) => core.clock.advance(ms),
    close,
    [Symbol.asyncDispose]: close,
  };
}
