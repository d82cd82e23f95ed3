import { create, toBinary } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { FaultDelaySchema } from "@xdskit/protos/envoy/extensions/filters/common/fault/v3/fault_pb";
import { FaultAbortSchema, HTTPFaultSchema } from "@xdskit/protos/envoy/extensions/filters/http/fault/v3/fault_pb";
import { FractionalPercent_DenominatorType, FractionalPercentSchema } from "@xdskit/protos/envoy/type/v3/percent_pb";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createActiveFaults,
  decideFault,
  type FaultInjectionConfig,
  grpcStatusFromHttp,
  parseHttpFault,
} from "./fault-injection.js";

const pct = (numerator: number, denominator = FractionalPercent_DenominatorType.HUNDRED) =>
  create(FractionalPercentSchema, { numerator, denominator });
const always = () => 0;
const never = () => 0.999999;

describe("parseHttpFault (A33)", () => {
  it("reads a fixed delay, a gRPC abort and max_active_faults", () => {
    const bytes = toBinary(
      HTTPFaultSchema,
      create(HTTPFaultSchema, {
        delay: create(FaultDelaySchema, {
          faultDelaySecifier: {
            case: "fixedDelay",
            value: create(DurationSchema, { seconds: 1n, nanos: 500_000_000 }),
          },
          percentage: pct(50, FractionalPercent_DenominatorType.TEN_THOUSAND),
        }),
        abort: create(FaultAbortSchema, { errorType: { case: "grpcStatus", value: 4 }, percentage: pct(100) }),
        maxActiveFaults: 3,
      }),
    );
    expect(parseHttpFault(bytes)).toEqual({
      delay: { kind: "fixed", delayMs: 1500, fraction: { numerator: 50, denominator: 10_000 } },
      abort: { kind: "status", code: 4, fraction: { numerator: 100, denominator: 100 } },
      maxActiveFaults: 3,
    });
  });

  it("maps an HTTP abort status to gRPC, reads header-driven faults, and refuses a status outside [200, 600)", () => {
    const http = (status: number) =>
      toBinary(
        HTTPFaultSchema,
        create(HTTPFaultSchema, {
          abort: create(FaultAbortSchema, { errorType: { case: "httpStatus", value: status } }),
        }),
      );
    expect(parseHttpFault(http(503)).abort).toEqual({
      kind: "status",
      code: 14,
      fraction: { numerator: 0, denominator: 100 },
    });
    expect(parseHttpFault(http(200)).abort).toMatchObject({ code: 2 });
    expect(() => parseHttpFault(http(600))).toThrow(/http_status 600/);
    const headerDriven = toBinary(
      HTTPFaultSchema,
      create(HTTPFaultSchema, {
        delay: create(FaultDelaySchema, {
          faultDelaySecifier: { case: "headerDelay", value: {} },
          percentage: pct(100),
        }),
        abort: create(FaultAbortSchema, { errorType: { case: "headerAbort", value: {} }, percentage: pct(30) }),
      }),
    );
    expect(parseHttpFault(headerDriven)).toEqual({
      delay: { kind: "header", fraction: { numerator: 100, denominator: 100 } },
      abort: { kind: "header", fraction: { numerator: 30, denominator: 100 } },
    });
  });

  it("maps HTTP statuses as gRPC's table does", () => {
    expect([400, 401, 403, 404, 429, 502, 503, 504, 500, 418].map(grpcStatusFromHttp)).toEqual([
      13, 16, 7, 12, 14, 14, 14, 14, 2, 2,
    ]);
    expect(grpcStatusFromHttp(199)).toBeUndefined();
  });
});

describe("decideFault (A33)", () => {
  const full = { numerator: 100, denominator: 100 };
  const fixed: FaultInjectionConfig = {
    delay: { kind: "fixed", delayMs: 20, fraction: full },
    abort: { kind: "status", code: 14, fraction: full },
  };

  it("delays and aborts when each draw falls inside its fraction, independently", () => {
    expect(decideFault(fixed, new Headers(), always)).toEqual({ delayMs: 20, abortCode: 14 });
    expect(decideFault(fixed, new Headers(), never)).toEqual({ delayMs: 20, abortCode: 14 });
    const half: FaultInjectionConfig = {
      delay: { kind: "fixed", delayMs: 20, fraction: { numerator: 50, denominator: 100 } },
      abort: { kind: "status", code: 14, fraction: { numerator: 50, denominator: 100 } },
    };
    const draws = [0.2, 0.7];
    let i = 0;
    expect(decideFault(half, new Headers(), () => draws[i++] as number)).toEqual({ delayMs: 20 });
  });

  it("takes header-driven values, caps header percentages at the configured ones and ignores bad headers", () => {
    const cfg: FaultInjectionConfig = {
      delay: { kind: "header", fraction: { numerator: 40, denominator: 100 } },
      abort: { kind: "header", fraction: { numerator: 40, denominator: 100 } },
    };
    const h = new Headers({
      "x-envoy-fault-delay-request": "15",
      "x-envoy-fault-abort-grpc-request": "9",
      "x-envoy-fault-abort-request-percentage": "90",
    });
    // A draw of 0.5 is outside 40 % (the header's 90 is capped at 40); 0.3 is inside.
    expect(decideFault(cfg, h, () => 0.3)).toEqual({ delayMs: 15, abortCode: 9 });
    expect(decideFault(cfg, h, () => 0.5)).toEqual({});
    h.set("x-envoy-fault-abort-request", "404");
    expect(decideFault(cfg, h, () => 0.3).abortCode).toBe(12);
    expect(decideFault(cfg, new Headers({ "x-envoy-fault-delay-request": "soon" }), always)).toEqual({});
    expect(decideFault(cfg, new Headers({ "x-envoy-fault-abort-grpc-request": "99" }), always)).toEqual({
      abortCode: 2,
    });
  });

  it("property: with a fraction of n/d, exactly the draws below n/d fault", () => {
    fc.assert(
      fc.property(fc.nat(100), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (n, draw) => {
        const cfg: FaultInjectionConfig = {
          abort: { kind: "status", code: 3, fraction: { numerator: n, denominator: 100 } },
        };
        return (decideFault(cfg, new Headers(), () => draw).abortCode === 3) === Math.floor(draw * 100) < n;
      }),
    );
  });
});

describe("active faults", () => {
  it("admits faults up to max_active_faults and frees a slot when one ends", () => {
    const a = createActiveFaults();
    expect(a.tryBegin(2)).toBe(true);
    expect(a.tryBegin(2)).toBe(true);
    expect(a.tryBegin(2)).toBe(false);
    a.end();
    expect(a.tryBegin(2)).toBe(true);
    expect(a.tryBegin(undefined)).toBe(true);
    expect(a.active).toBe(3);
    expect(a.tryBegin(0)).toBe(false);
  });
});
