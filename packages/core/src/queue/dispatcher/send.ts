/**
 * One send of a held job: one request (a confirm or a refund), never after the job's deadline, aborted on
 * `stop()` or a lost lease. A blip is not retried here: every request is an attempt, recorded by
 * `record.ts` and retried as the job's next attempt (with backoff), so the history, the counters and the
 * traces each see every request that left. It records nothing: it says what happened.
 */
import type { EpochMs } from '../../policy.ts';
import { describeAccount } from '../accounts.ts';
import { confirmBodyOf } from '../conversion-request.ts';
import { CAMPAIGN_ID_PATTERN } from '../validation.ts';
import { classifyFailure, type Failure, redactSecrets } from './classify.ts';
import type { HeldJob } from './held-jobs.ts';
import type { ApiKeyResolver, ConversionsClient, SendOptions } from './options.ts';
import { type DeliveryTrace, requestUrls } from './tracing.ts';

/** The endpoint of each job kind. */
const PATHS = { confirm: '/v1/conversions/s2s', refund: '/v1/conversions/s2s/refund' } as const;

/** When a send's request began and the status of its answer; null when nothing was sent. */
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
  windowClosedPattern: RegExp;
  /** A 4xx detail matching it says the job's campaign is not on s2s (class `held`). */
  campaignNotS2sPattern: RegExp;
  /** The statuses whose answer may hold a job (see `DispatcherOptions.holdStatuses`). */
  holdStatuses: readonly number[];
  /** The key of each job's account (see `DispatcherOptions.apiKeyFor`), or undefined: the client's own key. */
  apiKeyFor?: ApiKeyResolver | undefined;
}

/** What {@link sendJob} needs: the sender's context, and the URL of each path (for the request's trace). */
type SendJobContext = SendContext & { urlOf(path: string): string | null };

/** Removes the secrets the Dispatcher knows of (the client's key, the job's account key) from a text. */
type Redact = (text: string) => string;

/**
 * What one delivery sends with: the deadline to send by (the job's own, moved back by any clock skew
 * seen: `skew.ts`) and the delivery's trace.
 */
export interface SendTurn {
  deadline: EpochMs | null;
  trace: DeliveryTrace;
}

/** Sends a held job; see {@link sendJob}. */
export type Send = (held: HeldJob, turn: SendTurn) => Promise<SendResult>;

/**
 * Creates the send of a Dispatcher. Its failures are classified with `windowClosedPattern`, and their
 * reasons cleared of the client's own secrets (`client.redact`) as well as of anything shaped like one.
 */
export function createSender(context: SendContext): Send {
  const ctx: SendJobContext = { ...context, urlOf: requestUrls(() => context.client.baseUrl) };
  const clientRedact = ctx.client.redact;
  const redact: Redact = clientRedact === undefined ? (text) => text : (text) => clientRedact(text) ?? text;
  const { apiKeyFor } = ctx;
  if (apiKeyFor === undefined) return (held, turn) => sendJob(held, turn, ctx, redact, undefined);
  return async (held, turn) => {
    const { job } = held;
    // A job that cannot be sent anyway (past its deadline, or not sendable yet) ends as it would without
    // keys: it must not wait on a missing key past its deadline.
    const unsendable =
      turn.deadline === null ||
      ctx.now() > turn.deadline ||
      (job.kind === 'refund' && job.campaignId === null);
    if (unsendable) return sendJob(held, turn, ctx, redact, undefined);
    const key = await resolveKey(apiKeyFor, job.account);
    if (typeof key !== 'string') return notSent({ class: 'auth', reason: key.reason });
    // The client scrubs a per-request key from what it throws; the reason is scrubbed here as well, so a
    // client that does not leaves no key in the outbox either.
    const withKey: Redact = (text) => redact(text).split(key).join('[redacted]');
    return sendJob(held, turn, ctx, withKey, key);
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

/** A failure found before any request: nothing was sent. */
const notSent = (failure: Pick<Failure, 'class' | 'reason'>): SendResult => ({
  kind: 'failed',
  failure: { ...failure, blip: false, status: null, retryAfterMs: null, maybeApplied: false },
  sent: null,
});

/**
 * The `error.type` of a failed request, as OpenTelemetry's HTTP conventions write it: the status as text
 * when an answer came, else the class of what was thrown (`TimeoutError`, `ConnectionError`).
 */
export function errorTypeOf(status: number | null, error: unknown): string {
  if (status !== null) return String(status);
  if (!(error instanceof Error)) return '_OTHER';
  return error.name !== 'Error' ? error.name : error.constructor.name;
}

/**
 * Sends a held job: one request, preceded by a deadline check, with its own signal (aborted with the held
 * job by `stop()` or a lost lease, or by the send-timeout sweep) and the trace context of the delivery.
 */
async function sendJob(
  held: HeldJob,
  turn: SendTurn,
  ctx: SendJobContext,
  redact: Redact,
  apiKey: string | undefined,
): Promise<SendResult> {
  const { job } = held;
  const { deadline } = turn;
  if (deadline === null) {
    return notSent({ class: 'transient', reason: 'refund is waiting for its confirmation' });
  }
  if (job.kind === 'refund' && job.campaignId === null) {
    const reason =
      'no campaign_id is known for this reversal (the confirmation answer carried none, or was lost): ' +
      'supply it with a refund of the order that gives campaignId (postback refund --campaign-id)';
    return notSent({ class: 'permanent', reason });
  }
  // Checked before the request: nothing is sent after a deadline.
  if (ctx.now() > deadline)
    return { kind: 'expired', lastError: job.lastError, maybeApplied: false, sent: null };
  if (held.abortReason !== undefined) return notSent({ class: 'transient', reason: 'send aborted' });

  const path = PATHS[job.kind];
  const startedAt = ctx.now();
  const signal = held.startRequest(startedAt);
  const url = ctx.urlOf(path);
  const request = turn.trace.request({ method: 'POST', path, url, attempt: job.attempts, startedAt });
  /** The status of the answer, when the client tells it (a 2xx's too: its body is all it returns). */
  let answered: number | null = null;
  const options: SendOptions = {
    signal,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(request.headers === undefined ? {} : { headers: { ...request.headers } }),
    onStatus: (status) => {
      answered = status;
    },
  };
  const sent = (status: number | null): SentRequest => ({ startedAt, status });
  try {
    const response =
      job.kind === 'confirm'
        ? await ctx.client.conversions.confirm(confirmBodyOf(job), options)
        : await ctx.client.conversions.refund(
            { campaign_id: job.campaignId as string, order_id: job.orderId },
            options,
          );
    request.end({ endedAt: ctx.now(), outcome: 'delivered', status: answered, errorType: null });
    const campaignId = job.kind === 'confirm' ? campaignIdOf(response, redact) : null;
    return { kind: 'delivered', campaignId, sent: sent(answered) };
  } catch (error) {
    // Classified by what the service said: the job's own values and the key are taken out first.
    const failure = classifyFailure(error, {
      windowClosedPattern: ctx.windowClosedPattern,
      campaignNotS2sPattern: ctx.campaignNotS2sPattern,
      holdStatuses: ctx.holdStatuses,
      redact,
      job,
      at: ctx.now(),
      ...(apiKey === undefined ? {} : { apiKey }),
    });
    const status = failure.status ?? answered;
    // A 2xx means applied, whatever its body: a campaign_id we could not read stays unknown.
    if (failure.class === 'applied') {
      request.end({ endedAt: ctx.now(), outcome: 'delivered', status, errorType: null });
      return { kind: 'delivered', campaignId: null, sent: sent(status) };
    }
    const errorType = errorTypeOf(status, error);
    request.end({ endedAt: ctx.now(), outcome: failure.class, status, errorType });
    return { kind: 'failed', failure, sent: sent(failure.status) };
  } finally {
    held.endRequest();
  }
}
