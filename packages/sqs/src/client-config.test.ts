import { describe, expect, test } from 'vitest';
import { configuredEndpoint, sqsClientConfig } from './client-config.ts';

describe('configuredEndpoint', () => {
  test('reads AWS_ENDPOINT_URL_SQS first, then AWS_ENDPOINT_URL, as the AWS SDK does', () => {
    expect(
      configuredEndpoint({ AWS_ENDPOINT_URL_SQS: 'http://sqs.local:1', AWS_ENDPOINT_URL: 'http://all:2' }),
    ).toBe('http://sqs.local:1');
    expect(configuredEndpoint({ AWS_ENDPOINT_URL: 'http://all:2' })).toBe('http://all:2');
    expect(configuredEndpoint({ AWS_ENDPOINT_URL_SQS: '', AWS_ENDPOINT_URL: 'http://all:2' })).toBe(
      'http://all:2',
    );
    expect(configuredEndpoint({})).toBeUndefined();
  });

  test('AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true turns them off', () => {
    const env = { AWS_ENDPOINT_URL_SQS: 'http://sqs.local:1', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'TRUE' };
    expect(configuredEndpoint(env)).toBeUndefined();
    expect(configuredEndpoint({ ...env, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'false' })).toBe(
      'http://sqs.local:1',
    );
  });
});

describe('sqsClientConfig', () => {
  test('the configured endpoint becomes the client’s endpoint, so the queue URL’s host does not win', () => {
    expect(
      sqsClientConfig({ region: 'eu-west-1' }, { AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566' }),
    ).toEqual({
      region: 'eu-west-1',
      endpoint: 'http://127.0.0.1:4566',
    });
  });

  test('an endpoint given in the config wins, and without either nothing is added', () => {
    const config = { endpoint: 'http://given:1' };
    expect(sqsClientConfig(config, { AWS_ENDPOINT_URL_SQS: 'http://env:2' })).toBe(config);
    expect(sqsClientConfig({ region: 'eu-west-1' }, {})).toEqual({ region: 'eu-west-1' });
  });
});
