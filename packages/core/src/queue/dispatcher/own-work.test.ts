/**
 * The measured work per unit of a Dispatcher (`own-work.ts`): the median of the recent samples, none from
 * a sample with too few units, never above MAX_OWN_MS_PER_UNIT.
 */
import { describe, expect, it } from 'vitest';
import {
  createOwnWork,
  MAX_OWN_MS_PER_UNIT,
  MIN_UNITS_TO_MEASURE,
  OWN_MS_PER_UNIT,
  OWN_WORK_SAMPLES,
} from './own-work.ts';

describe('createOwnWork', () => {
  it('assumes OWN_MS_PER_UNIT until a sample with enough units measures it', () => {
    const own = createOwnWork();
    expect(own.msPerUnit).toBe(OWN_MS_PER_UNIT);
    own.observe(90, MIN_UNITS_TO_MEASURE - 1);
    expect(own.msPerUnit).toBe(OWN_MS_PER_UNIT);
    own.observe(6, 200);
    expect(own.msPerUnit).toBe(0.03);
  });

  it('takes the median of the last OWN_WORK_SAMPLES: one slow sample does not move it', () => {
    const own = createOwnWork();
    own.observe(2, 100);
    own.observe(2, 100);
    own.observe(40, 100); // a GC
    expect(own.msPerUnit).toBe(0.02);
    for (let i = 0; i < OWN_WORK_SAMPLES; i++) own.observe(4, 100);
    expect(own.msPerUnit).toBeCloseTo(0.04);
  });

  it('never takes more than MAX_OWN_MS_PER_UNIT a unit for its own', () => {
    const own = createOwnWork();
    for (let i = 0; i < 3; i++) own.observe(95, 20);
    expect(own.msPerUnit).toBe(MAX_OWN_MS_PER_UNIT);
  });
});
