/**
 * `postback reconcile`: the outbox's orders per campaign beside the service's own figures (see
 * `reconcile/`), as a table or JSON; exit 16 when something needs a person.
 */
import { createClient } from '@postback/client';
import type { Outbox } from '@postback/core';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { parseBaseUrl } from '../base-url.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { chunked, jsonText } from '../format.ts';
import { readKeysOnce } from '../keys.ts';
import { reconcile } from '../reconcile/index.ts';
import { writeReconcile } from '../reconcile/render.ts';
import { RECONCILE_EXIT_FLAGS, reconcileSpec } from '../specs/reconcile.ts';

/**
 * The return window the store stamps its reversals with, read tolerantly: a number, or null where the
 * store's policy has none (an open-ended window), and when the store does not say: core's default is
 * open-ended.
 */
export function storeReturnWindow(outbox: Outbox): number | null {
  const policy = (outbox as { policy?: { returnWindowMs?: unknown } }).policy;
  if (policy !== undefined && policy !== null && 'returnWindowMs' in policy) {
    if (policy.returnWindowMs === null) return null;
    if (typeof policy.returnWindowMs === 'number') return policy.returnWindowMs;
  }
  return null;
}

/**
 * Builds the `reconcile` command with its dependencies.
 *
 * @example
 * ```ts
 * await createReconcileCommand().run(['--db', 'postback.db', '--since', '30d', '--json'], io);
 * ```
 */
export function createReconcileCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(reconcileSpec, async ({ values }, io) => {
    const baseUrl = parseBaseUrl(values['base-url']);
    // Read once: a command that ends in seconds does not watch the keys file.
    const keys = await readKeysOnce(values['keys-file'], io.env);
    if (keys.keyFor(null) === undefined && !keys.perAccount)
      throw new UsageError(
        'set POSTBACK_API_KEY to a key with the read scope (or give per-account keys: --keys-file)',
      );
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { readOnly: true });
    const client = createClient({ baseUrl });
    try {
      const outbox = backend.outbox;
      const now = ctx.now();
      const window = values['return-window'];
      const report = await reconcile(
        outbox,
        { client, keyFor: keys.keyFor },
        {
          now,
          sinceMs: values.since ?? null,
          returnWindowMs: window === undefined ? storeReturnWindow(outbox) : window === 0 ? null : window,
        },
      );
      if (values.json) io.stdout(keys.redact(`${jsonText(report)}\n`));
      else {
        // Streamed in chunks of whole lines; a key cannot span lines (every field prints on one line).
        const out = chunked((text) => io.stdout(keys.redact(text)));
        writeReconcile(report, (line) => out.write(line));
        out.flush();
      }
      if (report.flags.length > 0 && !values.json)
        io.stderr(`postback reconcile: ${report.flags.length} flag(s) need a person\n`);
      return report.flags.length > 0 ? RECONCILE_EXIT_FLAGS : EXIT.ok;
    } finally {
      await client.close();
      await backend.outbox.close();
    }
  });
}

export const command: Command = createReconcileCommand();
