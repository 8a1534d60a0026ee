import { describe, expect, it } from 'vitest';
import { OptionsError } from '../errors.ts';
import { describeOutbox } from '../testing/outbox-conformance.ts';
import { createMemoryOutbox } from './memory-outbox.ts';

describeOutbox('memory', ({ now, policy }) => ({ outbox: createMemoryOutbox({ now, policy }) }));

describe('createMemoryOutbox', () => {
  it('rejects an unknown option by name (a typo must not be silently ignored)', () => {
    expect(() => createMemoryOutbox({ idprefix: 'x' } as never)).toThrow(OptionsError);
    expect(() => createMemoryOutbox({ idprefix: 'x' } as never)).toThrow(/idprefix/);
  });

  it('rejects a policy whose safety margin is not shorter than the window, naming policy', () => {
    try {
      createMemoryOutbox({ policy: { confirmWindowMs: 1_000, safetyMarginMs: 1_000 } });
      expect.unreachable();
    } catch (err) {
      expect(err).toMatchObject({ name: 'OptionsError', field: 'policy' });
    }
  });

  it('hands out copies: mutating a returned job changes nothing stored', async () => {
    const outbox = createMemoryOutbox({ now: () => 1_000_000 });
    const { job } = await outbox.confirm({
      orderId: 'o',
      valueMicros: 1,
      click: { token: 't', clickedAt: 999_000 },
    });
    job.state = 'delivered';
    expect((await outbox.get(job.id))?.state).toBe('pending');
  });

  it('refuses work after close', async () => {
    const outbox = createMemoryOutbox();
    await outbox.close();
    await expect(outbox.stats(Date.now())).rejects.toThrow(/closed/);
  });
});
