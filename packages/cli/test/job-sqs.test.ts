/**
 * `postback job --sqs`: SQS keeps no history of every job (`features.attemptHistory` false), but a dead
 * letter carries its own attempts, which `outbox.history(id)` returns: the command shows them instead of
 * saying there are none. Against the SQS emulator of `@postback/sqs`'s tests (AWS mocked at the HTTP level).
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { FAKE_CREDENTIALS, type Harness, startHarness } from '../../sqs/test/harness.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';

let h: Harness | undefined;
beforeEach(() => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', FAKE_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', FAKE_CREDENTIALS.secretAccessKey);
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_PROFILE', '');
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await h?.close();
  h = undefined;
});

it("shows a dead letter's attempts, which SQS keeps with it", async () => {
  h = startHarness();
  const outbox = h.outbox();
  expect(outbox.features.attemptHistory).toBe(false);
  await outbox.confirm({
    orderId: 'A-1',
    valueMicros: 1,
    click: { token: 'tok_1', clickedAt: h.sqs.now() - 1_000 },
  });
  const [claimed] = await outbox.claim({ now: h.sqs.now(), limit: 1, leaseMs: 30_000 });
  if (claimed === undefined) throw new Error('nothing claimed');
  await outbox.fail(claimed, {
    now: h.sqs.now(),
    state: 'dead',
    reason: 'Ad service answered 422: click token unknown',
    attempt: {
      startedAt: h.sqs.now(),
      durationMs: 90,
      outcome: 'permanent',
      status: 422,
      detail: 'click token unknown',
    },
  });
  const env = { POSTBACK_SQS_DLQ_URL: h.dlqUrl };

  const textIo = captureIo({ env });
  expect(await main(['job', '--sqs', h.queueUrl, claimed.id], textIo), textIo.err()).toBe(0);
  expect(textIo.out()).toMatch(/history {8}1 attempt\(s\), oldest first:/);
  expect(textIo.out()).toMatch(/90ms +permanent +422 +click token unknown/);
  expect(textIo.out()).not.toMatch(/keeps no attempt history|none kept/);

  const jsonIo = captureIo({ env });
  expect(await main(['job', '--sqs', h.queueUrl, claimed.id, '--json'], jsonIo)).toBe(0);
  expect(JSON.parse(jsonIo.out()).history).toEqual([
    expect.objectContaining({ outcome: 'permanent', status: 422, detail: 'click token unknown' }),
  ]);
});
