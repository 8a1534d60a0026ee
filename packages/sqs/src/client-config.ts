/**
 * The configuration of the `SQSClient` an outbox builds itself (no `client` given). The AWS SDK reads an
 * endpoint configured in the environment (`AWS_ENDPOINT_URL_SQS`, else `AWS_ENDPOINT_URL`), but its SQS
 * client then sends each request to the host named in the request's queue URL instead (its
 * `useQueueUrlAsEndpoint`, on by default), unless the client was given an `endpoint`. So a queue URL of
 * `sqs.us-east-1.amazonaws.com`, or of an emulator's host, would win over the endpoint you set. Here the
 * configured endpoint becomes the client's `endpoint`, so it is used for every request, as the SDK's docs
 * for configured endpoints promise.
 */
import type { SQSClientConfig } from '@aws-sdk/client-sqs';

/**
 * The endpoint configured in `env` the way the AWS SDK reads one: `AWS_ENDPOINT_URL_SQS`, else
 * `AWS_ENDPOINT_URL`; none when `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is `true` or both are unset or empty.
 *
 * @example
 * ```ts
 * configuredEndpoint({ AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566' }); // 'http://127.0.0.1:4566'
 * ```
 */
export function configuredEndpoint(env: Record<string, string | undefined>): string | undefined {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.trim().toLowerCase() === 'true') return undefined;
  for (const name of ['AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL']) {
    const value = env[name]?.trim();
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}

/**
 * The config of the client an outbox builds: `config` as given, plus the endpoint configured in `env`
 * when `config` names none.
 *
 * @example
 * ```ts
 * new SQSClient(sqsClientConfig({ region: 'eu-west-1' }, process.env));
 * ```
 */
export function sqsClientConfig(
  config: SQSClientConfig,
  env: Record<string, string | undefined>,
): SQSClientConfig {
  if (config.endpoint !== undefined) return config;
  const endpoint = configuredEndpoint(env);
  return endpoint === undefined ? config : { ...config, endpoint };
}
