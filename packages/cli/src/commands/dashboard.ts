/**
 * `postback dashboard`: serves `@postback/dashboard` over the outbox named by `--db`, `--pg` or `--sqs`
 * until SIGINT or SIGTERM, on 127.0.0.1 unless `--host` says otherwise. The token that enables replay and
 * purge comes from the environment variable `--token-env` names, so it never shows in `ps`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OptionsError } from '@postback/core';
import { createDashboard, MIN_TOKEN_LENGTH } from '@postback/dashboard';
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
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { mustExist: true });
    try {
      let dashboard: ReturnType<typeof createDashboard>;
      try {
        dashboard = createDashboard({ outbox: backend.outbox, now: ctx.now, ...(token ? { token } : {}) });
      } catch (error) {
        if (error instanceof OptionsError) throw new UsageError(error.message);
        throw error;
      }
      const server = createServer((req, res) => {
        dashboard.node(req, res).catch(() => {
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
      });
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
      const host = address.includes(':') ? `[${address}]` : address;
      io.stdout(
        text`postback dashboard on http://${host}:${port}/\nbackend: ${backend.describe}\n` +
          (token === undefined
            ? 'read-only (give --token-env NAME to enable replay and purge)\n'
            : 'replay and purge: with the token\n'),
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
