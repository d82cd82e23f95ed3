import { describe, expect, it } from "vitest";
import { createEndpointWeight, parseWrrConfig, WRR_DEFAULTS } from "./wrr-weights.js";

const report = (applicationUtilization: number, cpuUtilization: number, rpsFractional: number, eps = 0) => ({
  applicationUtilization,
  cpuUtilization,
  rpsFractional,
  eps,
});
const cfg = { ...WRR_DEFAULTS, blackoutPeriodMs: 10_000, weightExpirationPeriodMs: 180_000 };

describe("endpoint weight (A58)", () => {
  it("computes qps / (utilization + eps/qps × penalty), application_utilization first, else cpu", () => {
    const w = createEndpointWeight();
    w.onLoadReport(report(0.5, 0.9, 100, 10), 0, 2);
    const noBlackout = { ...cfg, blackoutPeriodMs: 0 };
    expect(w.weight(1, noBlackout)).toBeCloseTo(100 / (0.5 + 0.1 * 2));
    w.onLoadReport(report(0, 0.8, 100), 2, 1);
    expect(w.weight(3, noBlackout)).toBeCloseTo(125);
    expect(w.status).toBe("usable");
  });

  it("ignores reports without utilization or QPS", () => {
    const w = createEndpointWeight();
    w.onLoadReport(report(0, 0, 100), 0, 1);
    w.onLoadReport(report(0.5, 0, 0), 0, 1);
    expect(w.weight(20_000, cfg)).toBe(0);
    expect(w.status).toBe("not_yet_usable");
  });

  it("is 0 (not yet usable) during the blackout period after the first report, then usable", () => {
    const w = createEndpointWeight();
    w.onLoadReport(report(0.5, 0, 50), 1_000, 1);
    expect(w.weight(10_999, cfg)).toBe(0);
    expect(w.status).toBe("not_yet_usable");
    w.onLoadReport(report(0.5, 0, 50), 10_000, 1);
    expect(w.weight(11_000, cfg)).toBe(100);
    expect(w.status).toBe("usable");
  });

  it("expires after weight_expiration_period without reports, and then blacks out again", () => {
    const w = createEndpointWeight();
    w.onLoadReport(report(0.5, 0, 50), 0, 1);
    expect(w.weight(179_999, cfg)).toBe(100);
    expect(w.weight(180_000, cfg)).toBe(0);
    expect(w.status).toBe("stale");
    w.onLoadReport(report(0.5, 0, 50), 200_000, 1);
    expect(w.weight(205_000, cfg)).toBe(0);
    expect(w.status).toBe("not_yet_usable");
    expect(w.weight(210_000, cfg)).toBe(100);
  });

  it("restarts the blackout when the endpoint becomes READY again", () => {
    const w = createEndpointWeight();
    w.onLoadReport(report(0.5, 0, 50), 0, 1);
    expect(w.weight(20_000, cfg)).toBe(100);
    w.onReady();
    w.onLoadReport(report(0.5, 0, 50), 21_000, 1);
    expect(w.weight(25_000, cfg)).toBe(0);
    expect(w.weight(31_000, cfg)).toBe(100);
  });
});

describe("parseWrrConfig", () => {
  it("applies A58's defaults and reads gRPC's JSON durations", () => {
    expect(parseWrrConfig({})).toEqual(WRR_DEFAULTS);
    expect(
      parseWrrConfig({
        enableOobLoadReport: true,
        oobReportingPeriod: "2.5s",
        blackoutPeriod: "0s",
        weightExpirationPeriod: "60s",
        weightUpdatePeriod: "0.05s",
        errorUtilizationPenalty: 0.5,
      }),
    ).toEqual({
      enableOobLoadReport: true,
      oobReportingPeriodMs: 2500,
      blackoutPeriodMs: 0,
      weightExpirationPeriodMs: 60_000,
      weightUpdatePeriodMs: 100,
      errorUtilizationPenalty: 0.5,
    });
  });

  it("refuses a negative penalty, a bad duration and a non-object", () => {
    expect(() => parseWrrConfig({ errorUtilizationPenalty: -1 })).toThrow(/errorUtilizationPenalty/);
    expect(() => parseWrrConfig({ blackoutPeriod: "10m" })).toThrow(/blackoutPeriod/);
    expect(() => parseWrrConfig([])).toThrow(/object/);
  });
});
