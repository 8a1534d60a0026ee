/**
 * `postback dashboard`: serves `@postback/dashboard` over the outbox named by `--db`, `--pg` or `--sqs`
 * until SIGINT or SIGTERM, on 127.0.0.1 unless `--host` says otherwise. The token that enables replay and
 * purge comes from the environment variable `--token-env` names, so it never shows in `ps`. On loopback
 * the dashboard answers only to loopback `Host` names and `--allow-host` ones (DNS rebinding); bound
 * beyond loopback it needs the token, for reads too.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OptionsError } from '@postback/core';
import { createDashboard, isLoopbackAddress, MIN_TOKEN_LENGTH } from '@postback/dashboard';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { text } from '../format.ts';
import { dashboardSpec } from '../specs/dashboard.ts';

/** The token from the variable `--token-env` names, checked before anything is opened; undefined without the flag. */
function tokenFrom(name: string | undefined, env: Record<string, string | undefined>): string | undefined {
  if (name === undefined) return undefined;
  const token = env[name];
  if (token === undefined || token === '') throw new UsageError(text`--token-env: ${name} is not set`);
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new UsageError(
      text`--token-env: the token in ${name} must be at least ${MIN_TOKEN_LENGTH} characters`,
    );
  }
  return token;
}

/** Whether `--host` binds only this machine's loopback interface. */
const loopbackOnly = (host: string) =>
  host.toLowerCase() === 'localhost' || isLoopbackAddress(host.replace(/^\[|\]$/g, ''));

/**
 * Builds the `dashboard` command with its dependencies (tests inject an outbox).
 *
 * @example
 * ```ts
 * await createDashboardCommand().run(['--db', 'postback.db', '--port', '0'], io); // until io.signal aborts
 * ```
 */
export function createDashboardCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(dashboardSpec, async ({ values }, io) => {
    const token = tokenFrom(values['token-env'], io.env);
    const beyondLoopback = !loopbackOnly(values.host);
    if (beyondLoopback && token === undefined) {
      throw new UsageError(
        text`--host ${values.host} is beyond loopback: give --token-env NAME (the page shows order ids, accounts and values, so reads need the token there)`,
      );
    }
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { mustExist: true });
    try {
      let dashboard: ReturnType<typeof createDashboard>;
      try {
        dashboard = createDashboard({
          outbox: backend.outbox,
          now: ctx.now,
          allowedHosts: values['allow-host'] ?? [],
          workerSeenWithinMs: values['worker-seen-within'],
          ...(token === undefined ? {} : { token, tokenForReads: beyondLoopback }),
        });
      } catch (error) {
        if (error instanceof OptionsError) throw new UsageError(error.message);
        throw error;
      }
      const server = createServer(dashboard.node); // its promise never rejects
      const listening = await new Promise<boolean>((resolve) => {
        server.once('error', (error) => {
          io.stderr(
            text`postback dashboard: cannot listen on ${values.host}:${values.port}: ${error.message}\n`,
          );
          resolve(false);
        });
        server.listen(values.port, values.host, () => resolve(true));
      });
      if (!listening) return EXIT.failed;
      const { address, port } = server.address() as AddressInfo;
      // On every interface, the address to open here is loopback's (a browser names it in Host).
      const local = address === '0.0.0.0' ? '127.0.0.1' : address === '::' ? '::1' : address;
      const host = local.includes(':') ? `[${local}]` : local;
      const names = ['localhost', '127.0.0.1', '[::1]', ...(values['allow-host'] ?? [])];
      io.stdout(
        text`postback dashboard on http://${host}:${port}/\nbackend: ${backend.describe}\n` +
          (token === undefined
            ? 'read-only (give --token-env NAME to enable replay and purge)\n'
            : beyondLoopback
              ? 'reads, replay and purge: with the token\n'
              : 'replay and purge: with the token\n') +
          (beyondLoopback
            ? text`listening on ${values.host}: every read needs the token\n`
            : text`answers to Host: ${names.join(', ')} (--allow-host NAME for another)\n`),
      );
      await new Promise<void>((resolve) => {
        if (io.signal.aborted) resolve();
        else io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      io.stdout('postback dashboard stopped\n');
      return EXIT.ok;
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createDashboardCommand();
