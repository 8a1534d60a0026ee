/**
 * Checks of a page as a user meets it: axe-core's accessibility rules (its script injected through the
 * DevTools protocol, which the page's Content-Security-Policy does not govern), and whether the page is
 * wider than the window (a sideways scroll).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One rule axe found broken, with the elements that break it. */
export interface AxeViolation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  targets: string[];
}

/** Runs axe-core over the whole page and returns its violations. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(await axeSource);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(): Promise<{
            violations: { id: string; impact: AxeViolation['impact']; nodes: { target: string[] }[] }[];
          }>;
        };
      }
    ).axe;
    const { violations } = await axe.run();
    return violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
}

/** The violations of impact `serious` or `critical`. */
export const severe = (violations: AxeViolation[]): AxeViolation[] =>
  violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');

/** How far the page is wider than its window (0: no sideways scroll). */
export const sidewaysScroll = (page: Page): Promise<number> =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
