// The memory retries may hold (A6 "Memory Management"): each call may keep up to `perCallLimitBytes` of request
// messages for replay, all calls of a transport together up to `channelLimitBytes`. A message that does not fit
// commits the call (no further attempts). See docs/decisions.md#policies-retry.

/** gRPC C-core's per-call default. */
export const DEFAULT_PER_CALL_RETRY_BUFFER_BYTES = 256 * 1024;
/** grpc-java's per-channel default. */
export const DEFAULT_CHANNEL_RETRY_BUFFER_BYTES = 16 * 1024 * 1024;

export interface RetryBufferPool {
  /** Bytes held by all calls now. */
  readonly usedBytes: number;
  /** A buffer for one call; `release` it when the call ends or commits. */
  open(): RetryCallBuffer;
}

export interface RetryCallBuffer {
  readonly usedBytes: number;
  /** Reserves `bytes` for a message to keep; false (and nothing reserved) when a limit would be passed. */
  reserve(bytes: number): boolean;
  /** Frees this call's bytes; idempotent. */
  release(): void;
}

/** The limits of a transport's retry buffer; unset ones take the defaults above. */
export interface RetryBufferLimits {
  readonly perCallBytes?: number;
  readonly totalBytes?: number;
}

function limit(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`retryBufferLimits.${name} must be a whole number of bytes >= 0, not ${value}`);
  }
  return value;
}

export function createRetryBufferPool(limits: RetryBufferLimits = {}): RetryBufferPool {
  const perCallLimitBytes = limit(limits.perCallBytes, DEFAULT_PER_CALL_RETRY_BUFFER_BYTES, "perCallBytes");
  const channelLimitBytes = limit(limits.totalBytes, DEFAULT_CHANNEL_RETRY_BUFFER_BYTES, "totalBytes");
  let used = 0;
  return {
    get usedBytes() {
      return used;
    },
    open() {
      let mine = 0;
      let released = false;
      return {
        get usedBytes() {
          return mine;
        },
        reserve(bytes) {
          if (released || mine + bytes > perCallLimitBytes || used + bytes > channelLimitBytes) return false;
          mine += bytes;
          used += bytes;
          return true;
        },
        release() {
          if (released) return;
          released = true;
          used -= mine;
          mine = 0;
        },
      };
    },
  };
}
