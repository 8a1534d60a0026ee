/**
 * Runs once when the Next.js server starts: opens the outbox and starts the Dispatcher in this process
 * (unless `POSTBACK_WORKER=off`), so confirmations are delivered without a separate worker.
 */
export async function register(): Promise<void> {
  // The Edge runtime has no SQLite; `next build` must not open the database.
  if (process.env.NEXT_RUNTIME !== 'nodejs' || process.env.NEXT_PHASE === 'phase-production-build') return;
  const { shopBackend } = await import('./lib/backend');
  shopBackend();
}
