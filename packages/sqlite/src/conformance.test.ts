/**
 * The core conformance suites, run against the SQLite outbox and click store on real temp files: the
 * same rules every backend keeps, with no capability declared unsupported. The outbox runs them with its
 * writes on its own thread (the default) and on the calling thread.
 */
import { describeClickStore, describeOutbox } from '@postback/core/testing';
import { tempDatabase } from '../test/temp-files.ts';
import { createSqliteClickStore } from './click-store.ts';
import { createSqliteOutbox } from './outbox.ts';

describeOutbox('sqlite', ({ now, policy }) => {
  const temp = tempDatabase();
  return { outbox: createSqliteOutbox({ filename: temp.filename, now, policy }), cleanup: temp.cleanup };
});

// The same rules with every write on the calling thread's connection.
describeOutbox('sqlite (thread: false)', ({ now, policy }) => {
  const temp = tempDatabase();
  return {
    outbox: createSqliteOutbox({ filename: temp.filename, now, policy, thread: false }),
    cleanup: temp.cleanup,
  };
});

describeClickStore('sqlite', ({ policy }) => {
  const temp = tempDatabase();
  return { store: createSqliteClickStore({ filename: temp.filename, policy }), cleanup: temp.cleanup };
});
