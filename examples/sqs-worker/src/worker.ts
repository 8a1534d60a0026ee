/**
 * The worker: run as many copies as you like, on as many machines. Each long-polls the queue, sends up to
 * POSTBACK_CONCURRENCY jobs at a time to the ad service, keeps their messages hidden while a send is in
 * flight, deletes them when the service accepted, hides them until the next attempt on a transient
 * failure, and moves them to the dead-letter queue with the service's reason on a permanent one. SIGTERM
 * or SIGINT (Ctrl-C) stops it gracefully: no new claims, in-flight sends finish (or are given back).
 *
 *   npm start
 */
import { createClient } from '@postback/client';
import { createDispatcher, type Dispatcher } from '@postback/core';
import { createSqsOutbox, type SqsOutbox, type SqsOutboxOptions } from '@postback/sqs';
import { ConfigError, readConfig } from './config.ts';

/** A running worker. */
export interface RunningWorker {
  outbox: SqsOutbox;
  dispatcher: Dispatcher;
  /** Stops claiming, lets in-flight sends finish (up to 10 s), then closes the queue and the client. */
  stop(): Promise<void>;
}

/**
 * Starts a worker. `outboxOptions` is for tests (an injected SQSClient, shorter polls).
 *
 * @example
 * ```ts
 * const worker = await startWorker(process.env);
 * process.once('SIGTERM', () => worker.stop());
 * ```
 */
export async function startWorker(
  env: Record<string, string | undefined>,
  log: (line: string) => void = console.log,
  outboxOptions: Partial<SqsOutboxOptions> = {},
): Promise<RunningWorker> {
  const config = readConfig(env);
  if (config.apiKey === undefined || config.apiKey === '')
    throw new ConfigError('POSTBACK_API_KEY is not set (see the README, step 4)');
  const outbox = createSqsOutbox({
    queueUrl: config.queueUrl,
    deadLetterQueueUrl: config.deadLetterQueueUrl,
    onWarning: (message) => log(`warning: ${message}`),
    ...outboxOptions,
  });
  // Reads the queues' attributes: fails fast on a wrong URL or missing permissions, warns on risky settings.
  await outbox.checkQueues();
  const client = createClient({ baseUrl: config.apiUrl, apiKey: config.apiKey });
  const dispatcher = createDispatcher({
    outbox,
    client,
    concurrency: config.concurrency,
    batchSize: Math.min(10, config.concurrency),
    // The long poll does the waiting; do not add a pause after an empty one.
    pollIntervalMs: 10,
    // On stop, cut short a claim still waiting in its long poll.
    wake: () => () => outbox.interruptClaims(),
  });
  // One plain line per outcome: kind, order, reason. Never the whole job, never the key.
  dispatcher.on('delivered', ({ job, campaignId }) =>
    log(`delivered ${job.kind} ${job.orderId} (campaign ${campaignId ?? '?'})`),
  );
  dispatcher.on('retried', ({ job, reason, nextAttemptAt }) =>
    log(`retry ${job.kind} ${job.orderId} at ${new Date(nextAttemptAt).toISOString()}: ${reason}`),
  );
  dispatcher.on('dead', ({ job, reason }) => log(`dead ${job.kind} ${job.orderId}: ${reason}`));
  dispatcher.on('expired', ({ job, reason }) => log(`expired ${job.kind} ${job.orderId}: ${reason}`));
  dispatcher.on('paused', ({ status, until }) =>
    log(`paused until ${new Date(until).toISOString()}: the API key was refused (${status ?? 'no status'})`),
  );
  dispatcher.on('error', ({ during, error }) =>
    log(`error during ${during}: ${error instanceof Error ? error.message : String(error)}`),
  );
  dispatcher.start();
  log(`worker started on ${config.queueUrl.split('/').pop()} with concurrency ${config.concurrency}`);
  return {
    outbox,
    dispatcher,
    async stop() {
      const { released } = await dispatcher.stop({ timeoutMs: 10_000 });
      await outbox.close();
      await client.close();
      log(`worker stopped${released > 0 ? `; ${released} job(s) given back to the queue` : ''}`);
    },
  };
}

if (import.meta.main) {
  startWorker(process.env).then(
    (worker) => {
      const stop = () => void worker.stop();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (error: unknown) => {
      console.error(error instanceof ConfigError ? error.message : error);
      process.exitCode = 1;
    },
  );
}
