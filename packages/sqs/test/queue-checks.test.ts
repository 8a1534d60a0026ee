/** Start-up checks read the real queue attributes (through the SDK and the emulator) and warn on misconfiguration. */
import { afterEach, expect, test } from 'vitest';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

test('a well configured FIFO queue with a redrive policy to the dead-letter queue raises no warning', async () => {
  h = startHarness();
  expect(await h.outbox().checkQueues()).toEqual([]);
});

test('warns when the queue keeps messages for less than the 7-day window plus margin', async () => {
  h = startHarness({ queueAttributes: { MessageRetentionPeriod: '345600' } });
  const reported: string[] = [];
  const warnings = await h.outbox({ onWarning: (m) => reported.push(m) }).checkQueues();
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/4\.00 days.*8\.00 days/);
  expect(reported).toEqual(warnings);
});

test('warns when the queue has no redrive policy', async () => {
  h = startHarness({ queueAttributes: { RedrivePolicy: '' } });
  expect((await h.outbox().checkQueues()).join('\n')).toMatch(/no RedrivePolicy/);
});

test('warns when the redrive policy points at another queue than deadLetterQueueUrl', async () => {
  h = startHarness();
  const other = h.sqs.createQueue('other-dlq.fifo', { MessageRetentionPeriod: '1209600' });
  expect((await h.outbox({ deadLetterQueueUrl: other }).checkQueues()).join('\n')).toMatch(
    /points at postback-dlq\.fifo, not at .*other-dlq\.fifo/,
  );
});

test('warns when the dead-letter queue keeps messages for less time than the queue, and when there is none', async () => {
  h = startHarness();
  const shortDlq = h.sqs.createQueue('short-dlq.fifo', { MessageRetentionPeriod: '86400' });
  const warnings = await h.outbox({ deadLetterQueueUrl: shortDlq }).checkQueues();
  expect(warnings.join('\n')).toMatch(/dead jobs may vanish/);
  expect((await h.outbox({ deadLetterQueueUrl: undefined }).checkQueues()).join('\n')).toMatch(
    /no deadLetterQueueUrl/,
  );
});
