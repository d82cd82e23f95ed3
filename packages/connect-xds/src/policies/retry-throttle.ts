// gRPC's retry throttling (A6): a token bucket per target. Failures cost a token, successes earn `tokenRatio`;
// retries are allowed only while more than half the tokens remain. Kept in thousandths, as gRPC does, so
// `tokenRatio` has three decimals. See docs/decisions.md#policies-retry.

export interface RetryThrottleConfig {
  /** (0, 1000]. */
  readonly maxTokens: number;
  /** > 0; decimals past the third are dropped. */
  readonly tokenRatio: number;
}

export interface RetryThrottle {
  /** A call (or attempt) succeeded. */
  recordSuccess(): void;
  /** A call failed with a retryable status; returns whether a retry is still allowed. */
  recordFailure(): boolean;
  /** Tokens left, for tests and diagnostics. */
  readonly tokens: number;
}

/** Throws naming the bad field, as gRPC rejects such a `retryThrottling` config. */
export function createRetryThrottle(config: RetryThrottleConfig): RetryThrottle {
  if (!Number.isInteger(config.maxTokens) || config.maxTokens <= 0 || config.maxTokens > 1000) {
    throw new Error(`retryThrottling maxTokens ${config.maxTokens} must be an integer in (0, 1000]`);
  }
  const ratio = Math.floor(config.tokenRatio * 1000);
  if (!(config.tokenRatio > 0) || ratio <= 0) {
    throw new Error(`retryThrottling tokenRatio ${config.tokenRatio} must be at least 0.001`);
  }
  const max = config.maxTokens * 1000;
  const threshold = max / 2;
  let tokens = max;
  return {
    recordSuccess() {
      tokens = Math.min(max, tokens + ratio);
    },
    recordFailure() {
      tokens = Math.max(0, tokens - 1000);
      return tokens > threshold;
    },
    get tokens() {
      return tokens / 1000;
    },
  };
}
