// The fault injection filter (A33): the effective HTTPFault config of a route, the per-call delay/abort decision
// (header-driven values included) and the process-wide active fault count behind `max_active_faults`.
// See docs/decisions.md#policies-fault-injection.

import { fromBinary } from "@bufbuild/protobuf";
import type { FaultDelay } from "@xdskit/protos/envoy/extensions/filters/common/fault/v3/fault_pb";
import { type FaultAbort, HTTPFaultSchema } from "@xdskit/protos/envoy/extensions/filters/http/fault/v3/fault_pb";
import { type FractionalPercent, FractionalPercent_DenominatorType } from "@xdskit/protos/envoy/type/v3/percent_pb";

export const HTTP_FAULT_TYPE = "envoy.extensions.filters.http.fault.v3.HTTPFault";

/** A share of calls: `numerator` out of `denominator` (100, 10,000 or 1,000,000). */
export interface FaultFraction {
  readonly numerator: number;
  readonly denominator: number;
}

export interface FaultInjectionConfig {
  readonly delay?: ({ readonly kind: "fixed"; readonly delayMs: number } | { readonly kind: "header" }) & {
    readonly fraction: FaultFraction;
  };
  /** `code` is a gRPC status (an HTTP status is mapped when the config is read). */
  readonly abort?: ({ readonly kind: "status"; readonly code: number } | { readonly kind: "header" }) & {
    readonly fraction: FaultFraction;
  };
  /** Undefined: no limit. */
  readonly maxActiveFaults?: number;
}

/** What to do to one call; both absent means nothing. */
export interface FaultDecision {
  readonly delayMs?: number;
  /** gRPC status to end the call with (0: end it at once with OK, as A33 says). */
  readonly abortCode?: number;
}

const DENOMINATORS: Readonly<Record<number, number>> = {
  [FractionalPercent_DenominatorType.HUNDRED]: 100,
  [FractionalPercent_DenominatorType.TEN_THOUSAND]: 10_000,
  [FractionalPercent_DenominatorType.MILLION]: 1_000_000,
};

function fraction(p: FractionalPercent | undefined): FaultFraction {
  // An absent percentage is 0 % (the numerator defaults to 0); the denominator defaults to HUNDRED.
  if (p === undefined) return { numerator: 0, denominator: 100 };
  const denominator = DENOMINATORS[p.denominator];
  if (denominator === undefined) throw new Error(`fault percentage has unknown denominator ${p.denominator}`);
  return { numerator: Math.min(p.numerator, denominator), denominator };
}

/** gRPC's mapping of an HTTP status to a gRPC status (doc/http-grpc-status-mapping.md); undefined outside [200, 600). */
export function grpcStatusFromHttp(status: number): number | undefined {
  if (!Number.isInteger(status) || status < 200 || status >= 600) return undefined;
  switch (status) {
    case 400:
      return 13;
    case 401:
      return 16;
    case 403:
      return 7;
    case 404:
      return 12;
    case 429:
    case 502:
    case 503:
    case 504:
      return 14;
    default:
      return 2;
  }
}

/** Codes above 16 are not gRPC codes: such a status is UNKNOWN. */
function sanitizeGrpc(code: number): number {
  return code > 16 ? 2 : code;
}

function readDelay(delay: FaultDelay): NonNullable<FaultInjectionConfig["delay"]> {
  const f = fraction(delay.percentage);
  const spec = delay.faultDelaySecifier;
  if (spec.case === "headerDelay") return { kind: "header", fraction: f };
  if (spec.case !== "fixedDelay") throw new Error("fault delay sets neither fixed_delay nor header_delay");
  const ms = Number(spec.value.seconds) * 1000 + spec.value.nanos / 1e6;
  if (!(ms >= 0)) throw new Error(`fault fixed_delay ${ms} ms is negative`);
  return { kind: "fixed", delayMs: ms, fraction: f };
}

function readAbort(abort: FaultAbort): NonNullable<FaultInjectionConfig["abort"]> {
  const f = fraction(abort.percentage);
  const spec = abort.errorType;
  if (spec.case === "headerAbort") return { kind: "header", fraction: f };
  if (spec.case === "grpcStatus") return { kind: "status", code: sanitizeGrpc(spec.value), fraction: f };
  if (spec.case === "httpStatus") {
    const code = grpcStatusFromHttp(spec.value);
    if (code === undefined) throw new Error(`fault abort http_status ${spec.value} is not in [200, 600)`);
    return { kind: "status", code, fraction: f };
  }
  throw new Error("fault abort sets no error_type");
}

/** Reads a serialized HTTPFault (the filter's config or a per-route override); throws naming what is wrong. */
export function parseHttpFault(bytes: Uint8Array): FaultInjectionConfig {
  const m = fromBinary(HTTPFaultSchema, bytes);
  return Object.freeze({
    ...(m.delay === undefined ? {} : { delay: readDelay(m.delay) }),
    ...(m.abort === undefined ? {} : { abort: readAbort(m.abort) }),
    ...(m.maxActiveFaults === undefined ? {} : { maxActiveFaults: m.maxActiveFaults }),
  });
}

export const FAULT_HEADERS = Object.freeze({
  abortHttp: "x-envoy-fault-abort-request",
  abortGrpc: "x-envoy-fault-abort-grpc-request",
  abortPercentage: "x-envoy-fault-abort-request-percentage",
  delay: "x-envoy-fault-delay-request",
  delayPercentage: "x-envoy-fault-delay-request-percentage",
});

/** A header's last value as a non-negative integer; undefined when absent or not one (invalid headers are ignored). */
function headerInt(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name);
  if (raw === null) return undefined;
  const last = raw.slice(raw.lastIndexOf(",") + 1).trim();
  return /^\d{1,15}$/.test(last) ? Number(last) : undefined;
}

/** The header's percentage replaces the numerator, never above the configured one (A33). */
function headerFraction(headers: Headers, name: string, configured: FaultFraction): FaultFraction {
  const n = headerInt(headers, name);
  return n === undefined
    ? configured
    : { numerator: Math.min(n, configured.numerator), denominator: configured.denominator };
}

/** `random() * denominator < numerator`: one independent draw per fault kind (A33). */
function hit(f: FaultFraction, random: () => number): boolean {
  return Math.floor(random() * f.denominator) < f.numerator;
}

/** The faults for one call with these request headers, before `max_active_faults` is applied. */
export function decideFault(config: FaultInjectionConfig, headers: Headers, random: () => number): FaultDecision {
  let delayMs: number | undefined;
  const delay = config.delay;
  if (delay !== undefined) {
    if (delay.kind === "fixed") {
      if (delay.delayMs > 0 && hit(delay.fraction, random)) delayMs = delay.delayMs;
    } else {
      const ms = headerInt(headers, FAULT_HEADERS.delay);
      if (
        ms !== undefined &&
        ms > 0 &&
        hit(headerFraction(headers, FAULT_HEADERS.delayPercentage, delay.fraction), random)
      ) {
        delayMs = ms;
      }
    }
  }
  let abortCode: number | undefined;
  const abort = config.abort;
  if (abort !== undefined) {
    let code: number | undefined;
    let f = abort.fraction;
    if (abort.kind === "status") code = abort.code;
    else {
      const http = headerInt(headers, FAULT_HEADERS.abortHttp);
      if (http !== undefined) code = grpcStatusFromHttp(http);
      else {
        const grpc = headerInt(headers, FAULT_HEADERS.abortGrpc);
        if (grpc !== undefined) code = sanitizeGrpc(grpc);
      }
      f = headerFraction(headers, FAULT_HEADERS.abortPercentage, f);
    }
    if (code !== undefined && hit(f, random)) abortCode = code;
  }
  return delayMs === undefined && abortCode === undefined
    ? NO_FAULT
    : { ...(delayMs === undefined ? {} : { delayMs }), ...(abortCode === undefined ? {} : { abortCode }) };
}

const NO_FAULT: FaultDecision = Object.freeze({});

/** The process-wide count of calls with an active fault (A33: shared by every channel). */
export interface ActiveFaults {
  readonly active: number;
  /** Counts one more active fault unless that would pass `max` (undefined: no limit); false: inject nothing. */
  tryBegin(max: number | undefined): boolean;
  /** The fault has finished (delay over and no abort, or abort delivered). */
  end(): void;
}

export function createActiveFaults(): ActiveFaults {
  let active = 0;
  return {
    get active() {
      return active;
    },
    tryBegin(max) {
      if (max !== undefined && active >= max) return false;
      active++;
      return true;
    },
    end() {
      if (active > 0) active--;
    },
  };
}

/** The one counter every transport in this process shares. */
export const processActiveFaults: ActiveFaults = createActiveFaults();
