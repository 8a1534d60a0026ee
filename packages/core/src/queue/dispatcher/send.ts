/**
 * One send of a held job: the request (a confirm or a refund) with its quick in-process retries for
 * network blips (p-retry), never after the job's deadline, aborted on `stop()` or a lost lease. It
 * records nothing: it says what happened, and `record.ts` makes it durable.
 */
import pRetry, { AbortError } from 'p-retry';
import type { EpochMs } from '../../policy.ts';
import { describeAccount } from '../accounts.ts';
import { CAMPAIGN_ID_PATTERN } from '../validation.ts';
import { classifyFailure, type Failure, redactSecrets } from './classify.ts';
import type { HeldJob } from './held-jobs.ts';
import type { ApiKeyResolver, ConversionsClient, ResolvedDispatcherOptions, SendOptions } from './options.ts';

/** When a send's first request began and the status of its last answer; null when nothing was sent. */
export type SentRequest = { startedAt: EpochMs; status: number | null } | null;

/** What one send came to. `sent` is what the attempt history keeps of it. */
export type SendResult =
  | { kind: 'delivered'; campaignId: string | null; sent: SentRequest }
  | { kind: 'expired'; lastError: string | null; maybeApplied: boolean; sent: SentRequest }
  | { kind: 'failed'; failure: Failure; sent: SentRequest };

/** What sending needs. */
export interface SendContext {
  client: ConversionsClient;
  now: () => EpochMs;
  quickRetries: ResolvedDispatcherOptions['quickRetries'];
  windowClosedPattern: RegExp;
  /** The key of each job's account (see `DispatcherOptions.apiKeyFor`), or undefined: the client's own key. */
  apiKeyFor: ApiKeyResolver | undefined;
}

/** Removes the secrets the Dispatcher knows of (the client's key, the job's account key) from a text. */
type Redact = (text: string) => string;

/** Sends a held job; see {@link sendJob}. */
export type Send = (held: HeldJob) => Promise<SendResult>;

/**
 * Creates the send of a Dispatcher. Its failures are classified with `windowClosedPattern`, and their
 * reasons cleared of the client's own secrets (`client.redact`) as well as of anything shaped like one.
 */
export function createSender(ctx: SendContext): Send {
  const clientRedact = ctx.client.redact;
  const redact: Redact = clientRedact === undefined ? (text) => text : (text) => clientRedact(text) ?? text;
  const { apiKeyFor } = ctx;
  if (apiKeyFor === undefined) return (held) => sendJob(held, ctx, redact, undefined);
  return async (held) => {
    const { job } = held;
    // A job that cannot be sent anyway (past its deadline, or not sendable yet) ends as it would without
    // keys: it must not wait on a missing key past its deadline.
    const unsendable =
      job.deadline === null || ctx.now() > job.deadline || (job.kind === 'refund' && job.campaignId === null);
    if (unsendable) return sendJob(held, ctx, redact, undefined);
    const key = await resolveKey(apiKeyFor, job.account);
    if (typeof key !== 'string') return notSent({ class: 'auth', reason: key.reason });
    // The client scrubs a per-request key from what it throws; the reason is scrubbed here as well, so a
    // client that does not leaves no key in the outbox either.
    const withKey: Redact = (text) => redact(text).split(key).join('[redacted]');
    return sendJob(held, ctx, withKey, key);
  };
}

/**
 * The campaign a confirmation's answer names, or null (unknown: a reversal then needs it from the
 * operator). Only a `campaign_id` of the form every campaign id must have (`cmp_<id>`, as checked for
 * ids an app gives) that no redaction changes is taken: a service or proxy that answers with the API key
 * there must not get it stored with the job.
 */
function campaignIdOf(answer: unknown, redact: Redact): string | null {
  const value = (answer as { campaign_id?: unknown } | null)?.campaign_id;
  if (typeof value !== 'string' || !CAMPAIGN_ID_PATTERN.test(value)) return null;
  return redactSecrets(redact(value)) === value ? value : null;
}

/** The key of `account`, or why there is none (never the resolver's own message: it may quote the keys file). */
async function resolveKey(
  apiKeyFor: ApiKeyResolver,
  account: string | null,
): Promise<string | { reason: string }> {
  try {
    const key = await apiKeyFor(account);
    if (typeof key === 'string' && key.length > 0) return key;
    return { reason: `no API key for account ${describeAccount(account)}` };
  } catch (error) {
    const name = error instanceof Error ? error.name : typeof error;
    return { reason: `the API key resolver failed for account ${describeAccount(account)} (${name})` };
  }
}

/** Thrown inside a send when the job's deadline has passed: it ends retrying and the job expires. */
class DeadlinePassed extends Error {
  override name = 'DeadlinePassed';
}

/** A failure found before any request: nothing was sent. */
const notSent = (failure: Pick<Failure, 'class' | 'reason'>): SendResult => ({
  kind: 'failed',
  failure: { ...failure, blip: false, status: null, retryAfterMs: null, maybeApplied: false },
  sent: null,
});

/**
 * Sends a held job, quick retries included. Every request is preceded by a deadline check, has its own
 * signal (aborted with the held job by `stop()` or a lost lease, or by the send-timeout sweep),
 * and counts towards "maybe applied" when its failure says it may have reached the service.
 */
async function sendJob(
  held: HeldJob,
  ctx: SendContext,
  redact: Redact,
  apiKey: string | undefined,
): Promise<SendResult> {
  const { job } = held;
  const classify = (error: unknown) =>
    classifyFailure(error, { windowClosedPattern: ctx.windowClosedPattern, redact });
  if (job.deadline === null) {
    return notSent({ class: 'transient', reason: 'refund is waiting for its confirmation' });
  }
  if (job.kind === 'refund' && job.campaignId === null) {
    const reason =
      'no campaign_id is known for this reversal (the confirmation answer carried none, or was lost): ' +
      'supply it with a refund of the order that gives campaignId (postback refund --campaign-id)';
    return notSent({ class: 'permanent', reason });
  }
  const deadline = job.deadline;
  let lastError = job.lastError;
  /** Whether any request of this send may have been applied without our reading an answer. */
  let maybeApplied = false;
  /** What the last request threw, as thrown (p-retry turns a thrown non-`Error` into a `TypeError`). */
  let thrown: unknown;
  /** The classified failure of the last request, if one failed. */
  let last: Failure | undefined;
  const sent = (status: number | null): SentRequest =>
    held.sentAt === null ? null : { startedAt: held.sentAt, status };

  const attempt = async (): Promise<unknown> => {
    // Checked before every HTTP request, quick retries included: nothing is sent after a deadline.
    if (ctx.now() > deadline) throw new AbortError(new DeadlinePassed());
    if (held.abortReason !== undefined) throw new AbortError(new Error('send aborted'));
    const signal = held.startRequest(ctx.now());
    try {
      const options: SendOptions = apiKey === undefined ? { signal } : { signal, apiKey };
      if (job.kind === 'confirm') {
        const body = { click_token: job.clickToken, order_id: job.orderId, value_micros: job.valueMicros };
        return await ctx.client.conversions.confirm(body, options);
      }
      return await ctx.client.conversions.refund(
        { campaign_id: job.campaignId as string, order_id: job.orderId },
        options,
      );
    } catch (error) {
      thrown = error;
      throw error;
    } finally {
      held.endRequest();
    }
  };

  try {
    const response = await pRetry(attempt, {
      retries: ctx.quickRetries.retries,
      minTimeout: ctx.quickRetries.minTimeoutMs,
      maxTimeout: ctx.quickRetries.maxTimeoutMs,
      factor: 2,
      randomize: true,
      onFailedAttempt: () => {
        last = classify(thrown);
        maybeApplied ||= last.maybeApplied;
        lastError = last.reason;
      },
      shouldRetry: () => held.abortReason === undefined && last?.blip === true,
    });
    return {
      kind: 'delivered',
      campaignId: job.kind === 'confirm' ? campaignIdOf(response, redact) : null,
      sent: sent(null),
    };
  } catch (error) {
    if (error instanceof DeadlinePassed) {
      return { kind: 'expired', lastError, maybeApplied, sent: sent(last?.status ?? null) };
    }
    // The failure p-retry gave up on. Without one the send was aborted (stop, a lost lease) before any
    // request failed, and its outcome is not recorded.
    const failure = last ?? classify(error);
    // A 2xx means applied, whatever its body: a campaign_id we could not read stays unknown.
    if (failure.class === 'applied')
      return { kind: 'delivered', campaignId: null, sent: sent(failure.status) };
    return {
      kind: 'failed',
      failure: { ...failure, maybeApplied: maybeApplied || failure.maybeApplied },
      sent: sent(failure.status),
    };
  }
}
