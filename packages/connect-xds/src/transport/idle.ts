// Idleness of a transport (gRFC A9, for its backend connections): once no call has been in flight for
// `idleTimeoutMs`, the transport goes idle (its connections close); the next call brings it back (the policies
// connect again) and waits for a connection as any call does. See docs/decisions.md#connect-xds-keepalive-and-idle.
import type { Clock } from "@xdskit/orca-lrs-bridge";

/** gRPC's default channel idle timeout: 30 minutes. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
/** Node's timer limit: a longer idle timeout never fires, so it means no idle timeout. */
const MAX_TIMER_MS = 0x7fff_ffff;

export interface IdleTracker {
  readonly idle: boolean;
  callStarted(): void;
  callEnded(): void;
  close(): void;
}

/** `idleTimeoutMs` checked: a positive number of milliseconds, or Infinity (never idle). */
export function resolveIdleTimeout(value: number | undefined): number {
  if (value === undefined) return DEFAULT_IDLE_TIMEOUT_MS;
  if (Number.isNaN(value) || value <= 0) {
    throw new RangeError(`idleTimeoutMs must be a positive number of milliseconds or Infinity, not ${value}`);
  }
  return value;
}

export function createIdleTracker(
  clock: Clock,
  idleTimeoutMs: number,
  onIdle: () => void,
  onActive: () => void,
): IdleTracker {
  const enabled = idleTimeoutMs <= MAX_TIMER_MS;
  let calls = 0;
  let idle = false;
  let closed = false;
  let timer: unknown;
  const arm = () => {
    if (!enabled || closed) return;
    timer = clock.setTimeout(() => {
      if (closed || calls > 0) return;
      idle = true;
      onIdle();
    }, idleTimeoutMs);
  };
  arm();
  return {
    get idle() {
      return idle;
    },
    callStarted() {
      if (calls++ === 0) clock.clearTimeout(timer);
      if (!idle) return;
      idle = false;
      onActive();
    },
    callEnded() {
      if (--calls === 0) arm();
    },
    close() {
      closed = true;
      clock.clearTimeout(timer);
    },
  };
}
