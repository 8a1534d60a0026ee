/**
 * The work a Dispatcher's own sends and claims take of the thread its event loop runs on, as the adaptive
 * pace (`pace.ts`) measures it to read the others' share of the loop. Its own work is not only its code:
 * the client's requests and answers, the outbox's claims and records (the AWS SDK's calls for SQS, ~270 µs
 * of CPU a job on the project's machine) run on the same loop, in callbacks the Dispatcher cannot time one
 * by one. So it counts units of its work (each send started, each job claimed), and each sample with at
 * least {@link MIN_UNITS_TO_MEASURE} of them measures what a unit takes: the thread's CPU time (its loop's
 * busy time where the runtime cannot say) over the units; what others did in the sample only adds to it.
 * The median of the last {@link OWN_WORK_SAMPLES} is the measure, so one sample slowed by a GC does not
 * move it. It is capped at {@link MAX_OWN_MS_PER_UNIT}: pages served beside a Dispatcher raise every
 * sample, and taken for its own work they would hide from the pace. Until a sample measures it,
 * {@link OWN_MS_PER_UNIT} is assumed.
 */

/** The work per unit assumed until a sample measures it (ms: {@link MAX_OWN_MS_PER_UNIT}). */
export const OWN_MS_PER_UNIT = 0.05;
/**
 * The most work one unit is taken to take (ms), whatever the samples say. A unit is a send started, a job
 * claimed or an outcome recorded: three a job, ~0.03-0.05 ms each with the SQLite outbox. The samples
 * cannot tell a shop's pages from the Dispatcher's own work on the same loop: pages served beside a drain
 * raise every sample's work per unit, and at 0.2 ms (the cap until 2026-11-28) a drain beside the
 * example shop read all of the loop's work as its own and took half its pages (`bench/shop-under-
 * delivery.ts`: pages 0.45 busy/idle, 2,400 jobs/s delivered while busy; 0.93 and 45 jobs/s at 0.05). A
 * worker on SQS (0.15-0.3 ms of CPU a unit) then reads some of its own work as others' and paces itself:
 * a dedicated worker runs `pace: 'off'` (`postback worker` does).
 */
export const MAX_OWN_MS_PER_UNIT = 0.05;
/** Fewest units of work (sends started, jobs claimed) in a sample for it to measure their work. */
export const MIN_UNITS_TO_MEASURE = 4;
/** Samples kept, the median of which is the measure (at one a `PACE_SAMPLE_MS`: the last 3 s). */
export const OWN_WORK_SAMPLES = 30;

/** The measured work per unit of one Dispatcher. */
export interface OwnWork {
  /** Takes in a sample: the loop's thread did `workMs` of work, in which `units` of its own were done. */
  observe(workMs: number, units: number): void;
  /** The work one unit takes now (ms). */
  readonly msPerUnit: number;
}

/**
 * Creates the measure, at {@link OWN_MS_PER_UNIT} until a sample has enough units.
 *
 * @example
 * ```ts
 * const own = createOwnWork();
 * own.observe(30, 200); // 30 ms of CPU over 200 units
 * own.msPerUnit; // 0.15
 * ```
 */
export function createOwnWork(): OwnWork {
  const samples: number[] = [];
  let msPerUnit = OWN_MS_PER_UNIT;
  return {
    observe(workMs, units) {
      if (units < MIN_UNITS_TO_MEASURE) return;
      samples.push(workMs / units);
      if (samples.length > OWN_WORK_SAMPLES) samples.shift();
      const sorted = [...samples].sort((a, b) => a - b);
      msPerUnit = Math.min(MAX_OWN_MS_PER_UNIT, sorted[Math.floor(sorted.length / 2)] as number);
    },
    get msPerUnit() {
      return msPerUnit;
    },
  };
}
