/**
 * A refund after a final refusal: a confirmation whose first answer was lost (a 503, so it may have been
 * applied) and whose retry the service then refused for good (404: it does not know the click) was never
 * charged. Its refund says so and sends nothing. Over real HTTP against the sandbox.
 */
import { type AdServiceClient, createClient } from '@postback/client';
import { createDispatcher, createMemoryOutbox, type Outbox } from '@postback/core';
import { type RunningSandbox, type SandboxAccount, startSandbox } from '@postback/sandbox';
import { afterEach, beforeEach, expect, it } from 'vitest';

let sandbox: RunningSandbox;
let account: SandboxAccount;
let client: AdServiceClient;
let outbox: Outbox;

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
  account = await sandbox.control.createAccount({ balance_micros: 500_000_000 });
  client = createClient({ baseUrl: sandbox.url, apiKey: account.keys.conversions, timeout: 5_000 });
  outbox = createMemoryOutbox({ now: sandbox.now });
});

afterEach(async () => {
  await client.close();
  await outbox.close();
  await sandbox.close();
});

it('answers that nothing was charged for a confirmation refused 404 after a lost answer, and sends no reversal', async () => {
  const click = { token: 'tok_the_service_never_served', clickedAt: sandbox.now() - 60_000 };
  await outbox.confirm({ orderId: 'ord_1', valueMicros: 42_000_000, click });
  const dispatcher = createDispatcher({ outbox, client, backoff: { baseMs: 1, maxMs: 1, minMs: 0 } });
  await sandbox.control.setFaults({ fail_next: 1, error_status: 503 });
  for (let round = 0; round < 20; round++) {
    await dispatcher.drain();
    const [confirm] = await outbox.getByOrder('ord_1');
    if (confirm?.state === 'dead') break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const [confirm] = await outbox.getByOrder('ord_1');
  expect(confirm).toMatchObject({ state: 'dead', maybeAppliedAt: null });
  expect(confirm?.lastError).toContain('404');

  const refund = await outbox.refund({ orderId: 'ord_1' });
  expect(refund.outcome).toBe('cancelled');
  expect(refund.job.kind).toBe('confirm');
  const jobs = await outbox.getByOrder('ord_1');
  expect(jobs.map((j) => j.kind)).toEqual(['confirm']);
  expect(await dispatcher.drain()).toMatchObject({ delivered: 0 });
  const report = await sandbox.control.conversions(account.account_id);
  expect(report.conversions).toEqual([]);
});
