/**
 * The Dispatcher's state and the auth pause that moves it. A 401/403 (or an answer that is not the
 * service's) pauses all delivery: it is not the job's fault, and every other job would meet it too.
 *
 * ```
 * idle ──start()──► running ──stop()──► stopping ──► idle, or paused if it was paused or probing
 * idle | running ──401/403──► paused ──authPauseMs later, at the next claim──► probing
 * probing ──any other answer of the service──► idle | running        probing ──401/403──► paused
 * ```
 * One `paused` event per outage (a failed probe extends the pause silently), one `resumed` when it ends.
 */
import type { EpochMs } from '../../policy.ts';
import type { Failure } from './classify.ts';
import type { Emit } from './events.ts';

/** Where the Dispatcher is: `paused` after a 401/403, `probing` while one job tests the key again. */
export type DispatcherState = 'idle' | 'running' | 'paused' | 'probing' | 'stopping';

/** What the state needs to know. */
export interface StateContext {
  now: () => EpochMs;
  authPauseMs: number;
  emit: Emit;
  /** Whether the run loop runs (`start()` was called and `stop()` has not finished). */
  looping: () => boolean;
}

/** The Dispatcher's state with its pause; see the module header for the transitions. */
export interface DispatcherStateMachine {
  /** The current state; the Dispatcher sets it for `start()` and `stop()`. */
  state: DispatcherState;
  /** End of the current pause, or null. */
  readonly pausedUntil: EpochMs | null;
  /** Why delivery is paused (the redacted reason of the answer that paused it), or null. */
  readonly pauseReason: string | null;
  /** Pauses begun since the Dispatcher was created (one per outage). */
  readonly pauses: number;
  /** `stop()` was called and has not finished. */
  stopping(): boolean;
  /** A 401/403 (or a foreign answer) came back: pause, or extend the pause of the same outage. */
  pause(failure: Failure): void;
  /** The service answered otherwise: a probe that succeeds ends the pause. */
  resume(): void;
  /** Moves a pause whose time is up to `probing`; returns whether claiming may proceed. */
  mayClaim(): boolean;
}

/** Creates the state machine, `idle`. */
export function createStateMachine(ctx: StateContext): DispatcherStateMachine {
  let pausedAt: EpochMs | null = null;
  let pausedUntil: EpochMs | null = null;
  let pauseReason: string | null = null;
  let pauses = 0;
  const machine: DispatcherStateMachine = {
    state: 'idle',
    get pausedUntil() {
      return pausedUntil;
    },
    get pauseReason() {
      return pauseReason;
    },
    get pauses() {
      return pauses;
    },
    // A function, not an inline comparison: `state` changes across awaits, which flow analysis cannot see.
    stopping: () => machine.state === 'stopping',

    pause(failure) {
      const at = ctx.now();
      pausedUntil = at + ctx.authPauseMs;
      pauseReason = failure.reason;
      if (machine.state === 'probing' || machine.state === 'paused') {
        machine.state = 'paused';
        return; // still the same outage: one alert per outage
      }
      if (machine.state !== 'stopping') machine.state = 'paused';
      pausedAt = at;
      pauses += 1;
      ctx.emit('paused', { status: failure.status, reason: failure.reason, until: pausedUntil });
    },

    resume() {
      if (machine.state !== 'probing') return;
      machine.state = ctx.looping() ? 'running' : 'idle';
      const pausedForMs = pausedAt === null ? 0 : ctx.now() - pausedAt;
      pausedAt = null;
      pausedUntil = null;
      pauseReason = null;
      ctx.emit('resumed', { pausedForMs });
    },

    mayClaim() {
      if (machine.state === 'paused') {
        if (pausedUntil !== null && ctx.now() < pausedUntil) return false;
        machine.state = 'probing';
      }
      return true;
    },
  };
  return machine;
}
