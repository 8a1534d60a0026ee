/** The memory click store passes the ClickStore conformance suite. */
import { describeClickStore } from '../testing/click-store-conformance.ts';
import { createMemoryClickStore } from './memory-click-store.ts';

describeClickStore('memory', ({ confirmWindowMs }) => createMemoryClickStore({ confirmWindowMs }));
