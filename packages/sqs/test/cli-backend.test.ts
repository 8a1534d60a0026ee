/**
 * The CLI's `--sqs QUEUE_URL` backend, through the real `postback` commands: credentials and region come
 * from the SDK's provider chain (environment variables here), the dead-letter queue from
 * POSTBACK_SQS_DLQ_URL, and `dlq list` / `dlq replay` work on SQS through the Outbox methods.
 */
// Relative imports, not '@postback/cli': the CLI depends on this package, and a dependency back would be a cycle.

import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { open } from '../../cli/src/backends/sqs.ts';
import type { CommandIo } from '../../cli/src/io.ts';
import { main } from '../../cli/src/main.ts';
import { FAKE_CREDENTIALS, type Harness, startHarness } from './harness.ts';

let h: Harness;
beforeEach(() => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', FAKE_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', FAKE_CREDENTIALS.secretAccessKey);
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_PROFILE', '');
});
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await h?.close();
});

function captureIo(env: Record<string, string | undefined>): CommandIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env,
    isTTY: false,
    signal: new AbortController().signal,
  };
}

test('open() reaches the queue with the SDK’s credential chain and names it without secrets', async () => {
  h = startHarness();
  const backend = await open(h.queueUrl, { POSTBACK_SQS_DLQ_URL: h.dlqUrl });
  expect(backend.describe).toBe('sqs postback.fifo (dead letters: postback-dlq.fifo)');
  expect(backend.describe).not.toContain(FAKE_CREDENTIALS.secretAccessKey);
  await backend.outbox.confirm({
    orderId: 'A-1',
    valueMicros: 1,
    click: { token: 'tok_1', clickedAt: Date.now() - 1_000 },
  });
  expect(h.sqs.messages(h.queueUrl)).toHaveLength(1);
  expect(h.sqs.count('GetQueueAttributes')).toBeGreaterThan(0);
  await backend.outbox.close();
});

test('open() prints the start-up warnings of a queue without a redrive policy', async () => {
  h = startHarness({ queueAttributes: { RedrivePolicy: '' } });
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const backend = await open(h.queueUrl, {});
  expect(warn.mock.calls.flat().join('\n')).toMatch(/no RedrivePolicy/);
  await backend.outbox.close();
});

test('postback dlq list and dlq replay --id work on SQS: the dead job goes back to the queue', async () => {
  h = startHarness();
  const outbox = h.outbox();
  await outbox.confirm({
    orderId: 'A-1',
    valueMicros: 1,
    click: { token: 'tok_1', clickedAt: h.sqs.now() - 1_000 },
  });
  const [claimed] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
  await outbox.fail(claimed!, { now: h.sqs.now(), state: 'dead', reason: 'HTTP 422: click token unknown' });
  const env = { POSTBACK_SQS_DLQ_URL: h.dlqUrl };

  const listed = captureIo(env);
  expect(await main(['dlq', 'list', '--sqs', h.queueUrl, '--json'], listed)).toBe(0);
  expect(listed.out.join('')).toContain('HTTP 422: click token unknown');
  expect(listed.out.join('')).toContain(claimed!.id);

  const replayed = captureIo(env);
  expect(await main(['dlq', 'replay', '--sqs', h.queueUrl, '--id', claimed!.id], replayed)).toBe(0);
  expect(h.sqs.messages(h.dlqUrl)).toHaveLength(0);
  const [back] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
  expect(back).toMatchObject({ id: claimed!.id, orderId: 'A-1', attempts: 1 });
});

test('postback worker --sqs takes the long-poll wait from --sqs-wait-seconds or POSTBACK_SQS_WAIT_SECONDS, 0..20', async () => {
  h = startHarness();
  const waits = () =>
    h.sqs.calls.filter((c) => c.operation === 'ReceiveMessage').map((c) => c.input.WaitTimeSeconds);
  const env = { POSTBACK_SQS_DLQ_URL: h.dlqUrl, POSTBACK_API_KEY: 'pbk_test_key_not_used' };
  const worker = (args: string[], extra: Record<string, string> = {}) => {
    const io = captureIo({ ...env, ...extra });
    const base = [
      'worker',
      '--sqs',
      h.queueUrl,
      '--base-url',
      'http://127.0.0.1:9',
      '--drain',
      '--prune-every',
      'off',
    ];
    return main([...base, ...args], io).then((code) => ({ code, err: io.err.join('') }));
  };
  // An empty queue: the drain's one claim long-polls (the emulator cuts it short) and the worker exits.
  expect((await worker(['--sqs-wait-seconds', '7'])).code).toBe(0);
  expect((await worker([], { POSTBACK_SQS_WAIT_SECONDS: '0' })).code).toBe(0);
  // 7: one long poll; 0: short polls, which go side by side (10 + 6 for the default batch of 16).
  expect(waits()).toEqual([7, 0, 0]);
  for (const [args, extra] of [
    [['--sqs-wait-seconds', '21'], {}],
    [[], { POSTBACK_SQS_WAIT_SECONDS: 'soon' }],
  ] as const) {
    const refused = await worker([...args], extra);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      /(POSTBACK_SQS_WAIT_SECONDS \()?--sqs-wait-seconds\)? must be an integer 0\.\.20/,
    );
  }
  expect(waits()).toHaveLength(3);
});
