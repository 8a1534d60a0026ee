/**
 * Conformance suites for backend authors (`@postback/core/testing`): every `Outbox` and `ClickStore`
 * implementation runs the same suite. Requires vitest.
 */

export * from './click-store-conformance.ts';
export * from './outbox-conformance.ts';
