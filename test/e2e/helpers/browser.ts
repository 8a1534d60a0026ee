/**
 * Headless Chromium for the end-to-end suites (the system's `/usr/bin/chromium`, driven by
 * playwright-core), and a bounded poll for background effects such as a delivered postback.
 */
import { type Browser, chromium } from 'playwright-core';

/** Where the machine's Chromium lives; `CHROMIUM_PATH` overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Launches headless Chromium with the flags a sandboxed CI box needs (no GPU, no network chatter).
 *
 * @example
 * ```ts
 * const browser = await launchBrowser();
 * await browser.close();
 * ```
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: 20_000,
  });
}

/**
 * Calls `probe` every 50 ms until it returns a value other than undefined, or throws after `timeoutMs`
 * saying what it waited for.
 *
 * @example
 * ```ts
 * const row = await eventually('the confirmation', async () => (await world.conversions()).conversions[0]);
 * ```
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
