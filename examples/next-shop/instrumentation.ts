/**
 * Runs once when the Next.js server starts: opens the outbox and starts the Dispatcher in this process
 * (unless `POSTBACK_WORKER=off`), so confirmations are delivered without a separate worker.
 */
export async function register(): Promise<void> {
  // The Edge runtime has no SQLite: written as Next's documented `=== 'nodejs'` block, so webpack
  // (Next 15's default build) drops the import from the Edge bundle instead of failing on node:sqlite.
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    // `next build` must not open the database.
    if (process.env.NEXT_PHASE === 'phase-production-build') return;
    const { shopBackend } = await import('./lib/backend');
    shopBackend();
  }
}
