/**
 * Checks the queues' configuration without starting a worker: retention, redrive policy, FIFO, the
 * dead-letter queue. Exit code 0 when all is well, 1 when something should be fixed.
 *
 *   npm run check
 */
import { createSqsOutbox } from '@postback/sqs';
import { readConfig } from './config.ts';

if (import.meta.main) {
  const config = readConfig(process.env);
  const outbox = createSqsOutbox({
    queueUrl: config.queueUrl,
    deadLetterQueueUrl: config.deadLetterQueueUrl,
    onWarning: () => {},
  });
  const warnings = await outbox.checkQueues();
  await outbox.close();
  for (const warning of warnings) console.log(`- ${warning}`);
  console.log(warnings.length === 0 ? 'queues look right' : `${warnings.length} thing(s) to fix`);
  process.exitCode = warnings.length === 0 ? 0 : 1;
}
