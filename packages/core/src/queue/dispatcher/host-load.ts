/**
 * How busy the host is, as the adaptive pace reads it (`pace.ts`): the event loop's utilization (the
 * share of wall time it ran callbacks rather than waited for I/O: `performance.eventLoopUtilization`) and
 * its delay (how late a 10 ms timer fires: `monitorEventLoopDelay` of `node:perf_hooks`). Utilization is
 * the steady sign of pages being served (a shop under load runs its loop 95 % of the time, delivery alone
 * 20-100 % on the project's machine); the delay catches a loop blocked by long synchronous work. With
 * them, the CPU time of the loop's own thread (`process.threadCpuUsage`), by which the pace weighs its own
 * work against the others' (`own-work.ts`): unlike the loop's busy time it does not grow while other
 * processes hold the machine's cores. The process's CPU time was not taken: it counts the outbox's writer
 * thread and GC helpers, which do not hold pages back. Where the runtime has none of them (an edge
 * runtime), they read null and the pace stays at full speed.
 *
 * One histogram per process, enabled at the first read and disabled when nobody read it for a while.
 */

/** The host's load over the time since the previous read (null: unknown in this runtime). */
export interface HostLoad {
  /** Event-loop utilization, 0..1. */
  utilization: number | null;
  /** Mean event-loop delay beyond the timer's own interval (ms). */
  delayMs: number | null;
  /**
   * CPU time of the thread running the loop (ms; `process.threadCpuUsage`): unlike the loop's busy time,
   * it does not grow while other processes hold the machine's cores. Absent: unknown.
   */
  cpuMs?: number | null;
}

interface Utilization {
  idle: number;
  active: number;
  utilization: number;
}
type Elu = (a?: Utilization, b?: Utilization) => Utilization;
interface Histogram {
  enable(): void;
  disable(): void;
  reset(): void;
  readonly mean: number;
  readonly count: number;
}

/** The delay histogram's timer interval (ms). */
const RESOLUTION_MS = 10;
/** The histogram is disabled after this long without a read (ms). */
const IDLE_DISABLE_MS = 5_000;

const elu = (
  globalThis.performance as { eventLoopUtilization?: Elu } | undefined
)?.eventLoopUtilization?.bind(globalThis.performance);
let histogram: Histogram | null | undefined;
let disableTimer: ReturnType<typeof setTimeout> | undefined;
let lastUtilization: Utilization | undefined;
const threadCpu = (globalThis as { process?: { threadCpuUsage?: () => { user: number; system: number } } })
  .process?.threadCpuUsage;
let lastCpuUs: number | undefined;

/** The delay histogram of this process, enabled; null where the runtime has none. */
function delayHistogram(): Histogram | null {
  if (histogram === undefined) {
    const proc = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process;
    const hooks = proc?.getBuiltinModule?.('node:perf_hooks') as
      | { monitorEventLoopDelay?: (o: { resolution: number }) => Histogram }
      | undefined;
    histogram = hooks?.monitorEventLoopDelay?.({ resolution: RESOLUTION_MS }) ?? null;
    histogram?.enable();
  }
  clearTimeout(disableTimer);
  if (histogram !== null) {
    disableTimer = setTimeout(() => {
      histogram?.disable();
      histogram = undefined;
    }, IDLE_DISABLE_MS);
    (disableTimer as { unref?: () => void }).unref?.();
  }
  return histogram;
}

/**
 * The host's load since the previous call (by any caller in this process; the first call measures from
 * the process's start or the last one, so the pace drops it as a baseline).
 *
 * @example
 * ```ts
 * readHostLoad(); // baseline
 * setTimeout(() => console.log(readHostLoad()), 100); // { utilization: 0.02, delayMs: 0.1, cpuMs: 1.8 }
 * ```
 */
export function readHostLoad(): HostLoad {
  let utilization: number | null = null;
  if (elu !== undefined) {
    const now = elu();
    utilization = lastUtilization === undefined ? now.utilization : elu(now, lastUtilization).utilization;
    lastUtilization = now;
  }
  const h = delayHistogram();
  let delayMs: number | null = null;
  if (h !== null && h.count > 0) {
    delayMs = Math.max(0, h.mean / 1e6 - RESOLUTION_MS);
    h.reset();
  }
  let cpuMs: number | null = null;
  if (threadCpu !== undefined) {
    const { user, system } = threadCpu.call(globalThis.process);
    const us = user + system;
    cpuMs = lastCpuUs === undefined ? null : (us - lastCpuUs) / 1000;
    lastCpuUs = us;
  }
  return { utilization, delayMs, cpuMs };
}
