/**
 * The messages between the outbox and its writer thread, and how errors cross between them. Arguments and
 * results are plain data (jobs, numbers, strings) and cross by structured clone; an error does not keep its
 * class that way, so it crosses as {@link ErrorData} and is rebuilt with its class (`JobValidationError`
 * with its `field`), name, message and the codes callers test (`code`, `errcode`, `errstr`, `errno`,
 * `syscall`). Nothing else of an error crosses: its stack is the writer thread's and tells a caller nothing.
 */

import { JobValidationError, type WindowPolicy } from '@postback/core';
import type { SynchronousOption } from '../database.ts';
import type { WriteOperation } from '../outbox-operations.ts';

/** What the writer thread is started with (`workerData`). */
export interface WriterThreadData {
  filename: string;
  synchronous: SynchronousOption;
  busyTimeoutMs: number;
  maxBatchSize: number;
  policy: WindowPolicy;
}

/** Outbox → thread: the writes of one turn of the caller's event loop, in call order. */
export interface CallsMessage {
  type: 'calls';
  id: number;
  calls: Array<[op: WriteOperation, args: unknown[]]>;
}

/** Outbox → thread: commit what is queued, close the file, exit. */
export interface CloseMessage {
  type: 'close';
}

/** Thread → outbox: the outcome of every call of one {@link CallsMessage}, in the same order. */
export interface OutcomesMessage {
  type: 'outcomes';
  id: number;
  /** Transactions the thread has committed so far. */
  commits: number;
  outcomes: Array<[ok: true, value: unknown] | [ok: false, error: ErrorData]>;
}

/** An error as it crosses threads. */
export interface ErrorData {
  name: string;
  message: string;
  /** Set for a `JobValidationError`. */
  field?: string;
  /** The codes of SQLite and file-system errors. */
  codes: Record<string, string | number>;
}

const CODE_KEYS = ['code', 'errcode', 'errstr', 'errno', 'syscall'] as const;

/**
 * Flattens an error for `postMessage`.
 *
 * @example
 * ```ts
 * errorToData(new JobValidationError('refund.campaignId', 'unknown')).field; // 'refund.campaignId'
 * ```
 */
export function errorToData(error: unknown): ErrorData {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), codes: {} };
  const codes: Record<string, string | number> = {};
  for (const key of CODE_KEYS) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string' || typeof value === 'number') codes[key] = value;
  }
  const data: ErrorData = { name: error.name, message: error.message, codes };
  if (error instanceof JobValidationError) data.field = error.field;
  return data;
}

/**
 * Rebuilds an error flattened by {@link errorToData}, on the caller's thread.
 *
 * @example
 * ```ts
 * errorFromData(errorToData(error)) instanceof JobValidationError; // when error was one
 * ```
 */
export function errorFromData(data: ErrorData): Error {
  const error =
    data.field !== undefined && data.name === 'JobValidationError'
      ? new JobValidationError(data.field, '')
      : new Error('');
  error.message = data.message;
  if (error.name !== data.name) error.name = data.name;
  return Object.assign(error, data.codes);
}
