/**
 * The fault phases of a chaos run on the sandbox clock: which faults the sandbox had from when to when,
 * and whether the service was reachable then (it applied what a client sent: no fault, partial faults, or
 * answers lost after applying) or not (every request refused: an outage, a 429 burst). A run's verdict
 * asks it whether an order's service was reachable at some point inside the order's window.
 */
import type { SandboxFaults } from '@postback/sandbox';

/** One phase: the faults set from `from` until `to` (sandbox epoch ms; `to` open while it lasts). */
export interface FaultPhase {
  name: string;
  faults: SandboxFaults;
  reachable: boolean;
  from: number;
  to: number;
}

/** The timeline of a run; see {@link createFaultTimeline}. */
export interface FaultTimeline {
  /** Ends the current phase now and sets the sandbox's faults for the next one. */
  enter(name: string, faults: SandboxFaults, reachable: boolean): Promise<void>;
  /** The current phase (undefined before the first). */
  readonly current: FaultPhase | undefined;
  /** Whether some reachable phase overlaps `[from, to]` for more than an instant. */
  reachableWithin(from: number, to: number): boolean;
  /** Every phase so far, oldest first. */
  readonly phases: readonly FaultPhase[];
}

/**
 * Creates an empty timeline over the sandbox's fault control and clock.
 *
 * @example
 * ```ts
 * const timeline = createFaultTimeline((f) => control.setFaults(f), sandbox.now);
 * await timeline.enter('outage', { error_rate: 1 }, false);
 * ```
 */
export function createFaultTimeline(
  setFaults: (faults: SandboxFaults) => Promise<unknown>,
  now: () => number,
): FaultTimeline {
  const phases: FaultPhase[] = [];
  return {
    async enter(name, faults, reachable) {
      await setFaults(faults);
      const at = now();
      const last = phases.at(-1);
      if (last !== undefined) last.to = at;
      phases.push({ name, faults, reachable, from: at, to: Number.POSITIVE_INFINITY });
    },
    get current() {
      return phases.at(-1);
    },
    reachableWithin(from, to) {
      return phases.some((p) => p.reachable && Math.min(p.to, to) - Math.max(p.from, from) > 0);
    },
    get phases() {
      return phases;
    },
  };
}
