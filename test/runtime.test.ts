import { describe, expect, it } from 'vitest';

describe('runtime', () => {
  it('runs the test suite on Node 24 or newer, not the machine Node 20', () => {
    const major = Number(process.versions.node.split('.')[0]);
    expect(major).toBeGreaterThanOrEqual(24);
  });
});
