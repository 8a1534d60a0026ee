/**
 * `postback doctor`: runs {@link doctor} with what the worker would use — `POSTBACK_API_URL`,
 * `POSTBACK_API_KEY`, the outbox (`--db`/`--pg`/`--sqs`, opened read-only) and `POSTBACK_SECRET` — and
 * prints one line per check, with the fix under each failure. Exit 0 when none failed, 15 otherwise.
 */
import { createRedactor } from '@postback/client';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import type { OpenedBackend } from '../backends/backend.ts';
import { parseBaseUrl } from '../base-url.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { doctor } from '../doctor/index.ts';
import { CHECK_NAMES, type CheckName, type DoctorCheck } from '../doctor/types.ts';
import { jsonText, text } from '../format.ts';
import { defaultKeyProblem } from '../keys.ts';
import { DOCTOR_EXIT_FAILED, doctorSpec } from '../specs/doctor.ts';

/** The checks of `--skip` (repeatable, or comma-separated), each a known name. */
function skipped(values: readonly string[] | undefined): CheckName[] {
  const names = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  for (const name of names) {
    if (!(CHECK_NAMES as readonly string[]).includes(name))
      throw new UsageError(`--skip must name checks among ${CHECK_NAMES.join(', ')}, got '${name}'`);
  }
  return names as CheckName[];
}

const MARK: Readonly<Record<DoctorCheck['status'], string>> = { pass: 'ok  ', fail: 'FAIL', skip: 'skip' };
const WIDTH = Math.max(...CHECK_NAMES.map((name) => name.length));

/** One check as text: a line, and the fix under it when it failed. */
function checkLines(check: DoctorCheck): string {
  const line = text`${MARK[check.status]}  ${check.name.padEnd(WIDTH)}  ${check.detail}`;
  if (check.status === 'pass' || check.fix === null) return line;
  return `${line}\n${' '.repeat(WIDTH + 8)}${text`fix: ${check.fix}`}`;
}

/**
 * Builds the `doctor` command with its dependencies.
 *
 * @example
 * ```ts
 * await createDoctorCommand().run(['--db', 'postback.db', '--json'], io);
 * ```
 */
export function createDoctorCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(doctorSpec, async ({ values }, io) => {
    const baseUrl = parseBaseUrl(values['base-url']);
    const envKey = io.env.POSTBACK_API_KEY;
    const keyProblem = defaultKeyProblem(envKey);
    if (keyProblem !== undefined) throw new UsageError(keyProblem);
    const apiKey = envKey === undefined || envKey === '' ? undefined : envKey;
    const skip = skipped(values.skip);
    const flags = backendFlags(values);
    const given = [flags.db, flags.pg, flags.sqs].filter((v) => v !== undefined).length;
    if (given > 1) throw new UsageError('give at most one of --db FILE, --pg URL or --sqs URL');
    const secret = io.env.POSTBACK_SECRET;
    let backend: OpenedBackend | undefined;
    const report = await doctor({
      baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
      outbox: async () => {
        if (given === 0)
          throw new Error('no outbox given: --db FILE, --pg URL or --sqs URL (or POSTBACK_DB)');
        // Only looks: the SQLite file is opened read-only, an older schema is refused, not migrated.
        backend = await openFromFlags(ctx, flags, io.env, { readOnly: true });
        return backend.outbox;
      },
      secret: secret === undefined || secret === '' ? null : secret,
      skip,
      workerSeenWithinMs: values['worker-seen-within'],
      now: ctx.now,
    });
    // Every text is redacted by doctor(); the whole output once more, in every form a service may echo.
    const redact = createRedactor([apiKey, secret].filter((s): s is string => s !== undefined && s !== ''));
    if (values.json) {
      io.stdout(`${redact(jsonText(report))}\n`);
    } else {
      const failed = report.checks.filter((check) => !check.ok);
      const lines = [
        text`postback doctor: ${baseUrl}${backend === undefined ? '' : `, ${backend.describe}`}`,
      ];
      for (const check of report.checks) lines.push(checkLines(check));
      lines.push(
        failed.length === 0
          ? 'every check passed'
          : `${failed.length} check(s) failed: ${failed.map((check) => check.name).join(', ')}`,
      );
      io.stdout(`${redact(lines.join('\n'))}\n`);
    }
    return report.ok ? EXIT.ok : DOCTOR_EXIT_FAILED;
  });
}

export const command: Command = createDoctorCommand();
