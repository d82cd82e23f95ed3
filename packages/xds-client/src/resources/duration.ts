import type { DurationView as Duration } from "../gen/google/protobuf/duration_view.js";
import { fieldPath, type ValidationErrors } from "./validation.js";

/** The largest `seconds` google.protobuf.Duration allows (10,000 years). */
const MAX_SECONDS = 315576000000n;

/**
 * Validates a google.protobuf.Duration as gRPC does (seconds in [0, 315576000000], nanos in [0, 999999999]; negative
 * durations are rejected) and returns it in milliseconds (fractions kept). Reports under `path.seconds` /
 * `path.nanos`; the returned value is meaningless when it reported.
 */
export function parseDurationMs(duration: Duration, path: string, errors: ValidationErrors): number {
  const { seconds, nanos } = duration;
  if (seconds < 0n || seconds > MAX_SECONDS) {
    errors.add(fieldPath(path, "seconds"), "value must be in the range [0, 315576000000]");
  }
  if (nanos < 0 || nanos > 999999999) {
    errors.add(fieldPath(path, "nanos"), "value must be in the range [0, 999999999]");
  }
  return Number(seconds) * 1000 + nanos / 1e6;
}

/** A duration in milliseconds as gRPC service-config JSON writes it (`"1.5s"`, `"10s"`). */
export function durationMsToJson(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  if (nanos === 0) return `${seconds}s`;
  const fraction = String(nanos).padStart(9, "0").replace(/0+$/, "");
  return `${seconds}.${fraction}s`;
}
