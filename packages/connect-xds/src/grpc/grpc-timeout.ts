// The `grpc-timeout` request header: gRPC's HTTP/2 protocol allows at most 8 digits, then a unit. connect writes
// milliseconds whatever the size (`2591999999m` for 30 days); a timeout of 10^8 ms (about 28 hours) or more goes in
// the next coarser unit instead, rounded up as grpc-go does: seconds, then minutes, then hours, and at most
// 99999999H (about 11,400 years), the longest the header can say (docs/decisions.md#long-timers).

const MAX_VALUE = 99_999_999;
/** Each unit past milliseconds, with its length in milliseconds. */
const COARSER: readonly (readonly [string, number])[] = [
  ["S", 1_000],
  ["M", 60_000],
  ["H", 3_600_000],
];

/** The header value for a timeout of `timeoutMs` (a positive number of milliseconds). */
export function encodeGrpcTimeout(timeoutMs: number): string {
  const ms = Math.ceil(timeoutMs);
  if (ms <= MAX_VALUE) return `${ms}m`;
  for (const [unit, size] of COARSER) {
    const value = Math.ceil(ms / size);
    if (value <= MAX_VALUE) return `${value}${unit}`;
  }
  return `${MAX_VALUE}H`;
}

/** A timeout connect's own header (`${timeoutMs}m`) cannot carry: the transport handles such a deadline itself. */
export function needsCoarserUnit(timeoutMs: number): boolean {
  return Math.ceil(timeoutMs) > MAX_VALUE;
}
