/**
 * The agenda of a simulated run: actions at given times of a movable clock (the sandbox's), and the loop
 * that moves the clock to each in steps (finer inside the windows that need it), runs what is due, and
 * lets the code under test catch up after each step.
 */

/** What happens at one moment. */
interface Action {
  at: number;
  run: () => Promise<void>;
}

/** An agenda; see {@link createSimAgenda}. */
export interface SimAgenda {
  /** Runs `run` once the clock reaches `at` (epoch ms). Actions of one moment run in the order given. */
  at(at: number, run: () => Promise<void>): void;
  /** Between `from` and `to` the clock moves by the fine step. */
  fineBetween(from: number, to: number): void;
  /**
   * Moves the clock from now to `end`: runs what is due, calls `afterStep(now)` (let the code under test
   * work), then advances by a step (never past the next action). Resolves with the number of steps.
   */
  run(options: {
    now: () => number;
    advance: (ms: number) => void;
    end: number;
    stepMs: number;
    fineStepMs: number;
    afterStep: (now: number) => Promise<void>;
  }): Promise<number>;
}

/**
 * Creates an empty agenda.
 *
 * @example
 * ```ts
 * const agenda = createSimAgenda();
 * agenda.at(t0 + DAY, async () => control.setFaults({ error_rate: 1 }));
 * await agenda.run({ now: sandbox.now, advance: sandbox.advance, end: t0 + 2 * DAY, stepMs: HOUR,
 *   fineStepMs: MIN, afterStep: settle });
 * ```
 */
export function createSimAgenda(): SimAgenda {
  const actions: Action[] = [];
  const fine: Array<[number, number]> = [];
  return {
    at(at, run) {
      actions.push({ at, run });
    },
    fineBetween(from, to) {
      fine.push([from, to]);
    },
    async run({ now, advance, end, stepMs, fineStepMs, afterStep }) {
      // Stable: actions of one moment keep the order they were given in.
      const due = actions
        .map((action, i) => ({ action, i }))
        .sort((x, y) => x.action.at - y.action.at || x.i - y.i);
      let next = 0;
      let steps = 0;
      while (now() < end) {
        while (next < due.length && (due[next]?.action.at ?? end) <= now()) {
          await due[next]?.action.run();
          next += 1;
        }
        const t = now();
        await afterStep(t);
        const step = fine.some(([from, to]) => t >= from && t < to) ? fineStepMs : stepMs;
        const target = Math.min(t + step, due[next]?.action.at ?? end, end);
        if (target > now()) advance(Math.ceil(target - now()));
        steps += 1;
      }
      return steps;
    },
  };
}
