import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";

/** A google.protobuf.Duration as milliseconds (negative durations read as 0). */
export function durationToMs(duration: Duration | undefined): number {
  if (duration === undefined) return 0;
  return Math.max(0, Number(duration.seconds) * 1000 + duration.nanos / 1e6);
}

/** Milliseconds (>= 0, fractions kept to the nanosecond) as a google.protobuf.Duration. */
export function msToDuration(ms: number): Duration {
  const totalNanos = Math.round(Math.max(0, ms) * 1e6);
  const seconds = Math.floor(totalNanos / 1e9);
  return create(DurationSchema, { seconds: BigInt(seconds), nanos: totalNanos - seconds * 1e9 });
}
