/**
 * How a job travels in an SQS message, and back. The body is JSON holding everything a worker needs to send
 * the job (kind, order, click, value, deadline); the job's state, attempts and lease are not in the body
 * because SQS keeps them (visibility, `ApproximateReceiveCount`, receipt handle), except in a body re-sent
 * for a hold or a pause (below). The deadline is also a
 * message attribute so it shows in the AWS console and can be read without parsing the body.
 *
 * `maybeAppliedAt` (when a request of the job may first have reached the service) travels in the body only
 * when it is set — a replayed or dead-lettered job that may have been applied — so a freshly enqueued body
 * stays byte-for-byte what workers of earlier versions read; a body without it decodes as null.
 *
 * `history` (the job's last attempts, core's bounded attempt history) travels in the body only when a
 * transition re-sends the body: a failure writes the attempts its worker knew into the dead letter, and a
 * replay (or a refund's campaign supplied to a dead refund) carries them back into the queue. A retry only
 * changes the message's visibility, so its attempt is not kept. A body without it decodes as `[]`, and a
 * malformed history decodes as `[]` too: the attempts are for operators, never a reason to dead-letter a job.
 *
 * `campaignFrom` (a refund's campaign source, core's `campaignFrom`) travels in the body only when the refund
 * has one; a body without it (a confirm's, or one written by an earlier version) decodes as null (unknown).
 *
 * `account` (the advertiser account, see core's `accounts.ts`) travels in the body only when the job has one,
 * so a job without an account keeps exactly today's body; a body without it (written by an earlier version)
 * decodes as account null.
 *
 * `priorAttempts`, `notBefore`, `heldAt` and `heldCampaignId` travel only in a body re-sent for a hold or a
 * pause on a standard queue (`resend.ts`): the new message's receive count starts again, so the attempts
 * counted before travel in the body, with when it is due and what it is held for. Absent, they read as 0
 * and null.
 *
 * FIFO identifiers are derived from the order, which is its account and its order id: SQS allows 1–128
 * printable ASCII characters there, and an order id may be longer or hold anything, so such ids are
 * replaced by their SHA-256. A job without an account keeps today's identifiers (`o:<orderId>`); one with an
 * account gets `k:<SHA-256 of account and order id>`, so the same order id in two accounts is two groups
 * and two deduplication ids. On a standard queue the `MessageGroupId` is the account instead
 * ({@link fairGroupIdOf}): SQS fair queues keep one account's backlog from delaying the others.
 */
import { createHash } from 'node:crypto';
import { type AttemptRecord, type EpochMs, type Job, type JobKind, MAX_ACCOUNT_LENGTH } from '@postback/core';
import { ATTEMPT_HISTORY_LIMIT, type CampaignSource } from '@postback/core/store';
import { z } from 'zod';
import { MalformedMessageError } from './errors.ts';

/** Version of the body format; a worker refuses (dead-letters) bodies of other versions. */
export const JOB_BODY_VERSION = 1;

/** Message attribute holding the job's kind. */
export const KIND_ATTRIBUTE = 'postback-kind';
/** Message attribute holding the job's deadline (epoch ms), absent for a refund whose deadline is not known yet. */
export const DEADLINE_ATTRIBUTE = 'postback-deadline';

const epochMs = z.number().int().nonnegative();
const attemptSchema = z.object({
  startedAt: epochMs,
  durationMs: z.number().nonnegative(),
  outcome: z.string(),
  status: z.number().int().nullable(),
  detail: z.string().nullable(),
});
const common = {
  v: z.literal(JOB_BODY_VERSION),
  id: z.string().min(1),
  orderId: z.string().min(1),
  /** Absent from bodies of jobs without an account, and from bodies written before accounts existed. */
  account: z.string().min(1).max(MAX_ACCOUNT_LENGTH).nullable().default(null),
  createdAt: epochMs,
  deadline: epochMs.nullable(),
  campaignId: z.string().min(1).nullable(),
  /** Absent from bodies written before the field existed, and from bodies of jobs never maybe applied. */
  maybeAppliedAt: epochMs.nullable().default(null),
  /** Absent from bodies of jobs with no recorded attempt; unreadable histories read as none. */
  history: z.array(attemptSchema).max(ATTEMPT_HISTORY_LIMIT).default([]).catch([]),
  /** Attempts counted before this message was sent (a re-sent hold or pause); absent: 0. */
  priorAttempts: z.number().int().nonnegative().default(0),
  /** Not due before this time (a re-sent hold waiting longer than SQS's 900 s delay); absent: due. */
  notBefore: epochMs.nullable().default(null),
  /** When the job was first held for its campaign; absent: not held. */
  heldAt: epochMs.nullable().default(null),
  /** The campaign the job is held for (null: not named); absent: none. */
  heldCampaignId: z.string().min(1).nullable().default(null),
};

/** The body schema: one source of truth for encoding and decoding. */
export const jobBodySchema = z.discriminatedUnion('kind', [
  z.strictObject({
    ...common,
    kind: z.literal('confirm'),
    clickToken: z.string().min(1),
    valueMicros: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    clickedAt: epochMs,
  }),
  z.strictObject({
    ...common,
    kind: z.literal('refund'),
    /** Absent from bodies of refunds with no campaign source, and from bodies written before it existed. */
    campaignFrom: z.enum(['answer', 'caller']).nullable().default(null),
  }),
]);

/** A decoded message body. */
export type JobBody = z.infer<typeof jobBodySchema>;

/**
 * What a body re-sent for a hold or a pause carries beyond the job (`resend.ts`): the job's `attempts`
 * become `priorAttempts`, its held fields travel, and `notBefore` says when it is due (null: at once).
 */
export interface ResentFields {
  notBefore: EpochMs | null;
}

/**
 * The body to send for a job: only what the job needs to be delivered, `maybeAppliedAt` when set, and its
 * attempt `history` when there is one (at most `ATTEMPT_HISTORY_LIMIT`, the newest kept).
 *
 * @example
 * ```ts
 * const body = encodeJobBody(job); // '{"v":1,"id":"…","kind":"confirm",…}'
 * ```
 */
export function encodeJobBody(
  job: Job,
  history: readonly AttemptRecord[] = [],
  resent: ResentFields | null = null,
): string {
  const common = {
    v: JOB_BODY_VERSION,
    id: job.id,
    orderId: job.orderId,
    // Only when set: a job without an account keeps the body earlier versions wrote and read.
    ...(job.account === null ? {} : { account: job.account }),
    createdAt: job.createdAt,
    deadline: job.deadline,
    campaignId: job.campaignId,
    // Only when set: a fresh job's body stays readable by workers that predate the field.
    ...(job.maybeAppliedAt === null ? {} : { maybeAppliedAt: job.maybeAppliedAt }),
    ...(history.length === 0 ? {} : { history: history.slice(-ATTEMPT_HISTORY_LIMIT) }),
    // Only in a body re-sent for a hold or a pause (`resend.ts`): what SQS's receive count cannot keep.
    ...(resent === null
      ? {}
      : {
          ...(job.attempts === 0 ? {} : { priorAttempts: job.attempts }),
          ...(resent.notBefore === null ? {} : { notBefore: resent.notBefore }),
          ...(job.heldAt === null ? {} : { heldAt: job.heldAt, heldCampaignId: job.heldCampaignId }),
        }),
  };
  const body =
    job.kind === 'confirm'
      ? {
          ...common,
          kind: job.kind,
          clickToken: job.clickToken,
          valueMicros: job.valueMicros,
          clickedAt: job.clickedAt,
        }
      : {
          ...common,
          kind: job.kind,
          ...(job.campaignFrom === null ? {} : { campaignFrom: job.campaignFrom }),
        };
  return JSON.stringify(body);
}

/**
 * Parses a message body; a body without `maybeAppliedAt` reads it as null, one without `history` as `[]`. Throws
 * {@link MalformedMessageError} naming the first bad field.
 *
 * @example
 * ```ts
 * const body = decodeJobBody(message.Body ?? '');
 * ```
 */
export function decodeJobBody(text: string): JobBody {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new MalformedMessageError('body', 'not JSON');
  }
  const parsed = jobBodySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
    throw new MalformedMessageError(field, issue?.message ?? 'invalid');
  }
  return parsed.data;
}

/**
 * The job a body describes, with what SQS (or the dead-letter record, or the ledger) keeps beside the body:
 * its state, attempts, last change, lease, campaign, error and `maybeAppliedAt`. It is due at `updatedAt`.
 *
 * @example
 * ```ts
 * const job = jobOfBody(decodeJobBody(text), { state: 'pending', attempts: 1, updatedAt: now, lease: null,
 *   campaignId: null, maybeAppliedAt: null, lastError: null });
 * ```
 */
export function jobOfBody(
  body: JobBody,
  fields: Pick<
    Job,
    'state' | 'attempts' | 'updatedAt' | 'lease' | 'campaignId' | 'maybeAppliedAt' | 'lastError'
  > & {
    /** A refund's campaign source when its campaign did not come from the body. @defaultValue the body's */
    campaignFrom?: CampaignSource;
    /** Held fields kept beside the body (a FIFO hold, in the ledger). @defaultValue the body's */
    heldAt?: EpochMs | null;
    heldCampaignId?: string | null;
  },
): Job {
  const { campaignFrom, heldAt: _heldAt, heldCampaignId: _heldCampaignId, ...kept } = fields;
  const common = {
    ...kept,
    id: body.id,
    orderId: body.orderId,
    account: body.account,
    createdAt: body.createdAt,
    nextAttemptAt: fields.updatedAt,
    deadline: body.deadline,
    deliveredAt: null,
    heldAt: fields.heldAt ?? body.heldAt,
    heldCampaignId: fields.heldAt === undefined ? body.heldCampaignId : (fields.heldCampaignId ?? null),
  };
  return body.kind === 'confirm'
    ? {
        ...common,
        kind: 'confirm',
        clickToken: body.clickToken,
        valueMicros: body.valueMicros,
        clickedAt: body.clickedAt,
      }
    : {
        ...common,
        kind: 'refund',
        campaignFrom: campaignFrom === undefined ? body.campaignFrom : campaignFrom,
      };
}

/** Longest order id used as is in a FIFO id (so `c:` + it stays within SQS's 128 characters). */
const MAX_RAW_ORDER_KEY = 124;
const FIFO_ID_CHARS = /^[\x21-\x7e]+$/;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The FIFO `MessageGroupId` of an order. Without an account: `o:<orderId>` when the order id is short
 * printable ASCII, else `h:<sha256 hex>` (what every version wrote). With one: `k:<sha256 hex>` of the
 * account and the order id (joined by U+001F, which neither may hold). Deterministic, so a refund lands in
 * its confirmation's group.
 *
 * @example
 * ```ts
 * messageGroupIdOf('A-1001'); // 'o:A-1001'
 * messageGroupIdOf('A-1001', 'shop-17'); // 'k:…' (64 hex digits)
 * ```
 */
export function messageGroupIdOf(orderId: string, account: string | null = null): string {
  if (account !== null) return `k:${sha256(`${account}\u001f${orderId}`)}`;
  if (orderId.length <= MAX_RAW_ORDER_KEY && FIFO_ID_CHARS.test(orderId)) return `o:${orderId}`;
  return `h:${sha256(orderId)}`;
}

/**
 * The FIFO `MessageDeduplicationId` of a job: its kind and order, so a second confirm (or refund) of the
 * same order sent within SQS's 5-minute deduplication interval is dropped by SQS itself (and the same
 * order id of another account is not).
 *
 * @example
 * ```ts
 * deduplicationIdOf('confirm', 'A-1001'); // 'c:o:A-1001'
 * ```
 */
export function deduplicationIdOf(kind: JobKind, orderId: string, account: string | null = null): string {
  return `${kind === 'confirm' ? 'c' : 'r'}:${messageGroupIdOf(orderId, account)}`;
}

/** The `MessageGroupId` of jobs without an account on a standard (fair) queue. */
export const NO_ACCOUNT_GROUP_ID = 'none';

/**
 * The `MessageGroupId` of a job on a standard queue, which makes it an SQS fair queue with one tenant per
 * account: `a:<account>` when the account is short printable ASCII, else `h:<sha256 hex>` of it;
 * {@link NO_ACCOUNT_GROUP_ID} for jobs without an account (one tenant).
 *
 * @example
 * ```ts
 * fairGroupIdOf('shop-17'); // 'a:shop-17'
 * fairGroupIdOf(null); // 'none'
 * ```
 */
export function fairGroupIdOf(account: string | null): string {
  if (account === null) return NO_ACCOUNT_GROUP_ID;
  if (account.length <= MAX_RAW_ORDER_KEY && FIFO_ID_CHARS.test(account)) return `a:${account}`;
  return `h:${sha256(account)}`;
}
