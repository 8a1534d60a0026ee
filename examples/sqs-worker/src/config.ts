/**
 * The example's configuration, from environment variables. AWS credentials and region are NOT read here:
 * the AWS SDK finds them itself (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, an instance or task
 * role, AWS_REGION). The API key is only ever passed to the client, never printed.
 */

/** What the producer and the worker need. */
export interface ExampleConfig {
  /** The FIFO queue holding the jobs (`SQS_QUEUE_URL`). */
  queueUrl: string;
  /** Its dead-letter queue (`SQS_DLQ_URL`). */
  deadLetterQueueUrl: string;
  /** The ad service's base URL (`POSTBACK_API_URL`). */
  apiUrl: string;
  /** The API key with the `conversions` scope (`POSTBACK_API_KEY`). Worker only. */
  apiKey: string | undefined;
  /** Sends at the same time per worker (`POSTBACK_CONCURRENCY`, default 8). */
  concurrency: number;
}

/** A missing or invalid environment variable, named. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function required(env: Record<string, string | undefined>, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '')
    throw new ConfigError(`${name} is not set (see the README, step 4)`);
  return value.trim();
}

/**
 * Reads the configuration.
 *
 * @example
 * ```ts
 * const config = readConfig(process.env);
 * ```
 */
export function readConfig(env: Record<string, string | undefined>): ExampleConfig {
  const concurrency = Number(env.POSTBACK_CONCURRENCY ?? '8');
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
    throw new ConfigError(
      `POSTBACK_CONCURRENCY must be an integer from 1 to 256, got ${env.POSTBACK_CONCURRENCY}`,
    );
  }
  return {
    queueUrl: required(env, 'SQS_QUEUE_URL'),
    deadLetterQueueUrl: required(env, 'SQS_DLQ_URL'),
    apiUrl: required(env, 'POSTBACK_API_URL'),
    apiKey: env.POSTBACK_API_KEY,
    concurrency,
  };
}
