// The grpc-timeout header: at most 8 digits (gRPC's HTTP/2 protocol), the next coarser unit past them, rounded up.
import { describe, expect, it } from "vitest";
import { encodeGrpcTimeout, needsCoarserUnit } from "./grpc-timeout.js";

const DAY_MS = 24 * 60 * 60 * 1000;

describe("grpc-timeout", () => {
  it.each([
    [1, "1m"],
    [60_000, "60000m"],
    [99_999_999, "99999999m"],
    [100_000_000, "100000S"],
    [100_000_001, "100001S"],
    [30 * DAY_MS, "2592000S"],
    [99_999_999_000, "99999999S"],
    [99_999_999_001, "1666667M"],
    [10_000 * 365 * DAY_MS, "87600000H"],
    [Number.MAX_SAFE_INTEGER, "99999999H"],
  ])("%d ms is %s", (ms, header) => {
    expect(encodeGrpcTimeout(ms)).toBe(header);
    expect(header).toMatch(/^[0-9]{1,8}[mSMH]$/);
    expect(needsCoarserUnit(ms)).toBe(!header.endsWith("m"));
  });

  it("never says less time than it was given", () => {
    const unitMs = { m: 1, S: 1_000, M: 60_000, H: 3_600_000 } as const;
    for (let ms = 1; ms < 1e16; ms = Math.ceil(ms * 1.37) + 7) {
      const header = encodeGrpcTimeout(ms);
      const said = Number(header.slice(0, -1)) * unitMs[header.at(-1) as keyof typeof unitMs];
      if (header !== "99999999H") expect(said).toBeGreaterThanOrEqual(ms);
      expect(header.length).toBeLessThanOrEqual(9);
    }
  });
});
