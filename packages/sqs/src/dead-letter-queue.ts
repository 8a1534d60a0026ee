/**
 * The outbox's work on its dead-letter queue: moving a message there with its failure, scanning it (SQS
 * cannot list a queue: messages are received for a while and given back), and the operators' methods on
 * dead jobs (`get`, `listDead`, `replay`, `purgeDead`, `listJobs`, `history`). The record format itself is
 * in `dead-letter.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { EpochMs, Job, JobState, Outbox } from '@postback/core';
import {
  byUrgency,
  checkListDead,
  checkPurge,
  checkReplay,
  matchesJobFilter,
  replayJob,
  resolveJobFilter,
} from '@postback/core/store';
import { type DeadLetter, type DeadLetterState, failureAttributes, peekDeadLetters } from './dead-letter.ts';
import { SqsUnsupportedError } from './errors.ts';
import { encodeJobBody, messageGroupIdOf } from './message-codec.ts';
import { maybeAppliedAtOf, recordOf } from './order-ledger.ts';
import {
  assertOpen,
  jobAttributes,
  messageFor,
  requireDeadLetterQueue,
  type SqsOutboxContext,
} from './outbox-context.ts';
import { sendMessage } from './producer.ts';
import { changeVisibility, deleteMessages, type EntryOutcome } from './sqs-calls.ts';

/**
 * The states `listJobs` can list: those the dead-letter queue records (`dead`, `expired`, `cancelled`,
 * `unmatched`), or
 * none without a dead-letter queue. Every other state lives only inside the source queue, which SQS cannot list.
 */
export function listableStatesOf(context: Pick<SqsOutboxContext, 'dlqUrl'>): readonly JobState[] {
  return context.dlqUrl === undefined ? [] : DEAD_LETTER_STATES;
}

const DEAD_LETTER_STATES: readonly JobState[] = Object.freeze(['dead', 'expired', 'cancelled', 'unmatched']);

/** A message to dead-letter: its body as is, its attributes, and its order (null for a malformed body). */
export interface DeadLetterMessage {
  body: string;
  attributes: Record<string, MessageAttributeValue>;
  order: Pick<Job, 'orderId' | 'account'> | null;
}

/** What a dead-letter record says: the final state, why, when, after how many attempts. */
export interface DeadLetterFailure {
  state: DeadLetterState;
  reason: string;
  failedAt: EpochMs;
  attempts: number;
}

/**
 * Sends a message body to the dead-letter queue with its failure, runs `beforeDelete`, then deletes the
 * message from `fromUrl`.
 */
export async function moveToDeadLetter(
  context: SqsOutboxContext,
  message: DeadLetterMessage,
  failure: DeadLetterFailure,
  receiptHandle: string,
  fromUrl: string,
  beforeDelete?: () => Promise<void>,
): Promise<EntryOutcome> {
  const target = requireDeadLetterQueue(context, 'dead-lettering');
  await sendMessage(context.client, target, {
    body: message.body,
    attributes: { ...message.attributes, ...failureAttributes(failure) },
    ...(context.dlqFifo
      ? {
          groupId:
            message.order === null
              ? 'malformed'
              : messageGroupIdOf(message.order.orderId, message.order.account),
          // Unique per move: a job may be dead-lettered again (after a replay) within SQS's 5-minute
          // deduplication interval, and a deduplicated copy would be lost once the source is deleted.
          // The SDK's own retries of this request reuse it, so they still cannot make two copies.
          deduplicationId: `d:${randomUUID()}`,
        }
      : {}),
  });
  await beforeDelete?.();
  const [outcome] = await deleteMessages(context.client, fromUrl, [receiptHandle]);
  return outcome ?? 'ok';
}

/** Receives (hides) the dead-letter queue's messages; give back with {@link giveBack} what is not deleted. */
export async function scanDeadLetters(
  context: SqsOutboxContext,
): Promise<{ url: string; letters: DeadLetter[] }> {
  const url = requireDeadLetterQueue(context, 'reading dead jobs');
  const letters = await peekDeadLetters(context.client, url, {
    scanLimit: context.options.deadLetterScanLimit,
    visibilitySeconds: context.options.peekVisibilitySeconds,
    waitSeconds: context.options.deadLetterWaitSeconds,
  });
  return { url, letters };
}

/** Makes scanned dead letters visible again. */
export async function giveBack(
  context: SqsOutboxContext,
  url: string,
  letters: readonly DeadLetter[],
): Promise<void> {
  if (letters.length > 0)
    await changeVisibility(
      context.client,
      url,
      letters.map((l) => l.receiptHandle),
      0,
    );
}

/** The Outbox methods answered from the dead-letter queue. */
export type DeadLetterMethods = Pick<
  Outbox,
  'get' | 'listDead' | 'replay' | 'purgeDead' | 'listJobs' | 'history'
>;

/**
 * The dead-letter methods of an SQS outbox.
 *
 * @example
 * ```ts
 * const outbox = { ...deadLetterMethods(context), confirm, claim };
 * ```
 */
export function deadLetterMethods(context: SqsOutboxContext): DeadLetterMethods {
  const { ledger } = context;

  /** Replays one dead letter (or records it expired/cancelled); true when it was sent again. */
  async function replayLetter(letter: DeadLetter, job: Job, url: string, at: EpochMs): Promise<boolean> {
    const record = ledger === undefined ? null : await ledger.get(job.orderId, job.account);
    const orderHasRefund = record !== null && record.refund !== null;
    // A message the redrive policy moved after receives that recorded no outcome (workers that died
    // holding it) may have been applied: the ledger's record shows it, as at a receive.
    const maybeAppliedAt = maybeAppliedAtOf(job.maybeAppliedAt, recordOf(record, job), job.attempts);
    const dead = { ...job, maybeAppliedAt };
    const next = replayJob(dead, { now: at, orderHasRefund });
    if (next.state !== 'pending') {
      // Expired (deadline passed) or cancelled (the order was refunded meanwhile): recorded, not sent.
      await moveToDeadLetter(
        context,
        { body: encodeJobBody(dead, letter.history), attributes: jobAttributes(dead), order: job },
        {
          state: next.state === 'expired' ? 'expired' : 'cancelled',
          reason: next.lastError ?? next.state,
          failedAt: at,
          attempts: job.attempts,
        },
        letter.receiptHandle,
        url,
      );
      await ledger?.put(next);
      return false;
    }
    // The history travels with the replayed body: a second death shows the first one's attempts too.
    await sendMessage(
      context.client,
      context.queueUrl,
      messageFor(context, next, `p:${letter.messageId}`, letter.history),
    );
    await deleteMessages(context.client, url, [letter.receiptHandle]);
    await ledger?.put(next);
    return true;
  }

  return {
    async get(id) {
      assertOpen(context);
      // SQS cannot look into a queue by id; the dead-letter queue can be scanned, which is what operators
      // need (`dlq replay --id`). A job that is not there reads as null, wherever else it may be.
      if (context.dlqUrl === undefined)
        throw new SqsUnsupportedError(
          'get()',
          'SQS has no lookup by id; configure deadLetterQueueUrl to find dead jobs',
        );
      const { url, letters } = await scanDeadLetters(context);
      try {
        return letters.find((letter) => letter.job?.id === id)?.job ?? null;
      } finally {
        await giveBack(context, url, letters);
      }
    },

    async listJobs(filter) {
      assertOpen(context);
      const resolved = resolveJobFilter(filter);
      const listable = listableStatesOf(context);
      const unlisted = (resolved.states ?? []).filter((state) => !listable.includes(state));
      // Asked for by name, a state SQS cannot list is an error, not an empty page an operator would read
      // as "none". Without states, the listable ones are listed (`features.listableStates` says which).
      if (unlisted.length > 0)
        throw new SqsUnsupportedError(
          `listJobs({ states: [${unlisted.map((state) => `'${state}'`).join(', ')}] })`,
          context.dlqUrl === undefined
            ? 'SQS cannot list a queue, and no deadLetterQueueUrl is configured'
            : `SQS cannot list a queue; only the dead-letter queue's ${listable.join(', ')} jobs can be listed`,
        );
      if (listable.length === 0) return [];
      const { url, letters } = await scanDeadLetters(context);
      try {
        return letters
          .flatMap((letter) =>
            letter.job !== null &&
            matchesJobFilter(letter.job, resolved, letter.history.at(-1)?.status ?? null)
              ? [letter.job]
              : [],
          )
          .sort(byUrgency)
          .slice(resolved.offset, resolved.offset + resolved.limit);
      } finally {
        await giveBack(context, url, letters);
      }
    },

    async history(id) {
      assertOpen(context);
      // Only dead letters carry a history; without a dead-letter queue there is none to read.
      if (context.dlqUrl === undefined) return [];
      const { url, letters } = await scanDeadLetters(context);
      try {
        return letters.find((letter) => letter.job?.id === id)?.history ?? [];
      } finally {
        await giveBack(context, url, letters);
      }
    },

    async listDead(listOptions) {
      assertOpen(context);
      const { limit, after } = checkListDead(listOptions);
      const { url, letters } = await scanDeadLetters(context);
      try {
        const dead = letters
          .flatMap((letter) => (letter.job !== null && letter.state === 'dead' ? [letter.job] : []))
          .sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const start = after === undefined ? 0 : dead.findIndex((job) => job.id === after) + 1;
        return dead.slice(start, start + limit);
      } finally {
        await giveBack(context, url, letters);
      }
    },

    async replay(target, now) {
      assertOpen(context);
      const { ids, now: at } = checkReplay(target, now);
      const { url, letters } = await scanDeadLetters(context);
      const wanted = ids === null ? null : new Set(ids);
      const untouched: DeadLetter[] = [];
      let replayed = 0;
      try {
        for (const letter of letters) {
          const job = letter.job;
          if (job === null || letter.state !== 'dead' || (wanted !== null && !wanted.has(job.id))) {
            untouched.push(letter);
            continue;
          }
          if (await replayLetter(letter, job, url, at)) replayed += 1;
        }
      } finally {
        await giveBack(context, url, untouched);
      }
      return replayed;
    },

    async purgeDead(purgeOptions) {
      assertOpen(context);
      const ids = checkPurge(purgeOptions);
      const { url, letters } = await scanDeadLetters(context);
      const wanted = ids === null ? null : new Set(ids);
      const doomed = letters.filter(
        (l) => l.state === 'dead' && (wanted === null || (l.job !== null && wanted.has(l.job.id))),
      );
      const kept = letters.filter((l) => !doomed.includes(l));
      try {
        const outcomes =
          doomed.length === 0
            ? []
            : await deleteMessages(
                context.client,
                url,
                doomed.map((l) => l.receiptHandle),
              );
        return outcomes.filter((o) => o === 'ok').length;
      } finally {
        await giveBack(context, url, kept);
      }
    },
  };
}
