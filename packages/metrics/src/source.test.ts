import { describe, expect, it } from 'vitest';
import { outcomeLabel } from './source.ts';

describe('outcomeLabel', () => {
  it.each([
    'delivered',
    'auth',
    'misconfigured',
    'window-closed',
    'rate-limited',
    'unmatched',
    'transient',
    'permanent',
    'stopped',
  ])('keeps the attempt outcome %s as its own label', (outcome) => {
    expect(outcomeLabel(outcome)).toBe(outcome);
  });

  it('labels an outcome this version does not know as other, never as itself', () => {
    expect(outcomeLabel('ord_1 pixel')).toBe('other');
  });
});
