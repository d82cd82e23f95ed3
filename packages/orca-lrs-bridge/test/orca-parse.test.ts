// Reading a per-call ORCA report from trailers: today's Envoy forms (`-bin` first, else one `endpoint-load-metrics`
// with a BIN / TEXT / JSON prefix), the earlier forms as a fallback, their errors, and A51's value ranges.
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { describe, expect, test } from "vitest";
import {
  decodeOrcaBinaryTrailer,
  decodeOrcaLoadReport,
  OrcaParseError,
  parseOrcaJson,
  parseOrcaNative,
  readOrcaReport,
  readOrcaReportFromHeaders,
} from "../src/index.js";

const report = (init: Parameters<typeof create<typeof OrcaLoadReportSchema>>[1]) => create(OrcaLoadReportSchema, init);
const b64 = (init: Parameters<typeof report>[0]) =>
  Buffer.from(toBinary(OrcaLoadReportSchema, report(init))).toString("base64");

describe("endpoint-load-metrics (native)", () => {
  test("reads the five top-level names and named_metrics.<key>, with spaces around entries", () => {
    expect(
      parseOrcaNative(
        " cpu_utilization:0.7, mem_utilization: 0.25 ,application_utilization:1.5,rps_fractional:12,eps:1e-1,named_metrics.foo:123,named_metrics.a.b:-4",
      ),
    ).toEqual(
      report({
        cpuUtilization: 0.7,
        memUtilization: 0.25,
        applicationUtilization: 1.5,
        rpsFractional: 12,
        eps: 0.1,
        namedMetrics: { foo: 123, "a.b": -4 },
      }),
    );
    expect(parseOrcaNative("")).toEqual(report({}));
  });

  test("empty entries are skipped, as Envoy splits a header list", () => {
    expect(parseOrcaNative(" ,cpu_utilization:0.5,, eps:1 ,")).toEqual(report({ cpuUtilization: 0.5, eps: 1 }));
    expect(parseOrcaNative(" , ")).toEqual(report({}));
  });

  test.each([
    ["cpu_utilization:0.5,cpu_utilization:0.6", "metric cpu_utilization appears more than once"],
    ["named_metrics.foo:1, named_metrics.foo:2", "metric named_metrics.foo appears more than once"],
    ["cpu_utilization", 'entry "cpu_utilization" is not name:value'],
    [":1", "has an empty metric name"],
    ["cpu_utilization:", 'has value "", not a finite number'],
    ["cpu_utilization:abc", 'has value "abc", not a finite number'],
    ["cpu_utilization:NaN", "not a finite number"],
    ["cpu_utilization:inf", "not a finite number"],
    ["cpu_utilization:1e999", "not a finite number"],
    ["cpu_utilization:0x10", "not a finite number"],
    ["utilization.foo:0.5", "unsupported metric name utilization.foo"],
    ["named_metrics.:1", "unsupported metric name named_metrics."],
  ])("%s is refused: %s", (text, message) => {
    const error = catchError(() => parseOrcaNative(text));
    expect(error).toBeInstanceOf(OrcaParseError);
    expect(error.format).toBe("native");
    expect(error.message).toContain(message);
  });
});

describe("endpoint-load-metrics-json", () => {
  test("reads proto JSON (either field spelling), ignoring unknown fields", () => {
    expect(
      parseOrcaJson('{"cpu_utilization":0.5,"namedMetrics":{"foo":2},"utilization":{"gpu":0.25},"future_field":1}'),
    ).toEqual(report({ cpuUtilization: 0.5, namedMetrics: { foo: 2 }, utilization: { gpu: 0.25 } }));
  });

  test.each([
    ["{", "is not an OrcaLoadReport in proto JSON"],
    ['{"cpu_utilization":"high"}', "is not an OrcaLoadReport in proto JSON"],
    ["[1]", "is not an OrcaLoadReport in proto JSON"],
  ])("%s is refused", (text, message) => {
    const error = catchError(() => parseOrcaJson(text));
    expect(error.format).toBe("json");
    expect(error.message).toContain(message);
  });
});

describe("endpoint-load-metrics-bin", () => {
  test("decodes base64 with or without padding", () => {
    const value = b64({ cpuUtilization: 0.5, namedMetrics: { q: 3 } });
    expect(value.endsWith("=")).toBe(true);
    const expected = report({ cpuUtilization: 0.5, namedMetrics: { q: 3 } });
    expect(decodeOrcaBinaryTrailer(value)).toEqual(expected);
    expect(decodeOrcaBinaryTrailer(value.replace(/=+$/, ""))).toEqual(expected);
    expect(decodeOrcaBinaryTrailer("")).toEqual(report({}));
  });

  test.each([
    ["bad base64", "!!!!", "is not valid base64"],
    ["one stray character", "QUJDRA=x", "is not valid base64"],
    ["a length of 4n+1", "QUJDR", "is not valid base64"],
    ["two values joined by the HTTP layer", "CQAAAAAAAOA/, CQAAAAAAAOA/", "appears more than once"],
    ["a truncated message", Buffer.from([0x09, 0x00, 0x00]).toString("base64"), "is not a valid OrcaLoadReport"],
    ["a truncated map entry", Buffer.from([0x42, 0x05, 0x0a, 0x01]).toString("base64"), "not a valid OrcaLoadReport"],
  ])("%s is refused", (_name, value, message) => {
    const error = catchError(() => decodeOrcaBinaryTrailer(value));
    expect(error.format).toBe("bin");
    expect(error.message).toContain(message);
  });

  test("keeps unknown fields and reads the deprecated rps, as protobuf does", () => {
    const bytes = new Uint8Array([
      0x18,
      0x07,
      0xf8,
      0x01,
      0x01,
      0x09,
      ...new Uint8Array(new Float64Array([0.5]).buffer),
    ]);
    const decoded = decodeOrcaLoadReport(bytes);
    expect(decoded.rps).toBe(7n);
    expect(decoded.cpuUtilization).toBe(0.5);
    expect(decoded.$unknown).toHaveLength(1);
  });
});

describe("A51 value ranges: out-of-range values are dropped, the rest of the report is kept", () => {
  // cpu, application, qps (rps_fractional) and eps in [0, +inf); mem and utilization values in [0, 1]; NaN never.
  const cases: [string, Parameters<typeof report>[0], Parameters<typeof report>[0]][] = [
    ["negative cpu", { cpuUtilization: -0.1, eps: 2 }, { eps: 2 }],
    ["cpu above 1 is allowed", { cpuUtilization: 3.5 }, { cpuUtilization: 3.5 }],
    [
      "infinite cpu is allowed",
      { cpuUtilization: Number.POSITIVE_INFINITY },
      { cpuUtilization: Number.POSITIVE_INFINITY },
    ],
    ["NaN cpu", { cpuUtilization: Number.NaN }, {}],
    ["mem above 1", { memUtilization: 1.01, cpuUtilization: 0.2 }, { cpuUtilization: 0.2 }],
    ["mem of exactly 1", { memUtilization: 1 }, { memUtilization: 1 }],
    ["negative application", { applicationUtilization: -1 }, {}],
    ["negative qps and eps", { rpsFractional: -5, eps: -1 }, {}],
    ["a utilization above 1", { utilization: { a: 1.5, b: 0.5 } }, { utilization: { b: 0.5 } }],
    ["a negative named metric is kept", { namedMetrics: { x: -3 } }, { namedMetrics: { x: -3 } }],
    ["a NaN named metric", { namedMetrics: { x: Number.NaN, y: 1 } }, { namedMetrics: { y: 1 } }],
    ["a NaN request cost", { requestCost: { x: Number.NaN } }, {}],
  ];
  test.each(cases)("%s", (_name, input, expected) => {
    expect(decodeOrcaBinaryTrailer(b64(input))).toEqual(report(expected));
    expect(parseOrcaJson(toJsonString(OrcaLoadReportSchema, report(input)))).toEqual(report(expected));
  });

  test("the native form drops an out-of-range value too", () => {
    expect(parseOrcaNative("mem_utilization:1.5,cpu_utilization:0.3")).toEqual(report({ cpuUtilization: 0.3 }));
  });
});

describe("which header: -bin first, else one endpoint-load-metrics by its prefix, else the earlier forms", () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);
  const read = (entries: Record<string, string>) => readOrcaReportFromHeaders(headers(entries));
  const expected = report({ cpuUtilization: 0.5, namedMetrics: { q: 2 } });
  const json = toJsonString(OrcaLoadReportSchema, expected);

  test("none: no report; each form alone: its report and its name", () => {
    expect(read({ other: "x" })).toBeUndefined();
    const cases: [Record<string, string>, string][] = [
      [{ "endpoint-load-metrics-bin": b64({ cpuUtilization: 0.5, namedMetrics: { q: 2 } }) }, "bin"],
      [{ "endpoint-load-metrics": `BIN ${b64({ cpuUtilization: 0.5, namedMetrics: { q: 2 } })}` }, "prefixed-bin"],
      [{ "endpoint-load-metrics": "TEXT cpu_utilization:0.5, named_metrics.q:2" }, "prefixed-text"],
      [{ "endpoint-load-metrics": `JSON ${json}` }, "prefixed-json"],
      [{ "endpoint-load-metrics": "cpu_utilization:0.5,named_metrics.q:2" }, "native"],
      [{ "endpoint-load-metrics-json": json }, "json"],
    ];
    for (const [entries, format] of cases) expect(read(entries)).toEqual({ ok: true, report: expected, format });
  });

  test("-bin wins beside any endpoint-load-metrics form (even a broken one), and that beside -json", () => {
    const bin = b64({ eps: 7 });
    for (const other of ["TEXT eps:1", "JSON {}", "BIN !!", "eps:1", "WHAT is this"]) {
      expect(read({ "endpoint-load-metrics-bin": bin, "endpoint-load-metrics": other })).toEqual({
        ok: true,
        report: report({ eps: 7 }),
        format: "bin",
      });
    }
    expect(read({ "endpoint-load-metrics-bin": bin, "endpoint-load-metrics-json": "{" })).toMatchObject({ ok: true });
    expect(read({ "endpoint-load-metrics": "TEXT eps:3", "endpoint-load-metrics-json": '{"eps":9}' })).toEqual({
      ok: true,
      report: report({ eps: 3 }),
      format: "prefixed-text",
    });
  });

  test.each([
    ["an unknown prefix", "PROTO abc", undefined, 'unsupported ORCA header format "PROTO"'],
    ["a prefix in lower case", "text eps:1", "native", "unsupported metric name text eps"],
    ["TEXT: a name given twice", "TEXT eps:1, eps:2", "prefixed-text", "(TEXT): metric eps appears more than once"],
    ["TEXT: utilization. is not a name Envoy reads", "TEXT utilization.a:0.5", "prefixed-text", "unsupported"],
    ["TEXT: request_cost. neither", "TEXT request_cost.a:1", "prefixed-text", "unsupported metric name"],
    ["TEXT: a value that is no number", "TEXT eps:x", "prefixed-text", 'has value "x", not a finite number'],
    ["TEXT twice, joined by the HTTP layer", "TEXT eps:1, TEXT cpu_utilization:1", "prefixed-text", "more than once"],
    ["JSON that is not a report", "JSON [1]", "prefixed-json", "(JSON) is not an OrcaLoadReport in proto JSON"],
    ["JSON without a body", "JSON", "prefixed-json", "is not an OrcaLoadReport"],
    ["BIN without a body", "BIN", "prefixed-bin", "endpoint-load-metrics (BIN) is empty"],
    ["BIN of padding only", "BIN ==", "prefixed-bin", "is empty"],
    ["BIN that is not base64", "BIN !!!!", "prefixed-bin", "(BIN) is not valid base64"],
    ["BIN twice, joined", "BIN CQAAAAAAAOA/, BIN CQAAAAAAAOA/", "prefixed-bin", "appears more than once"],
    ["BIN of a truncated message", `BIN ${Buffer.from([9, 0]).toString("base64")}`, "prefixed-bin", "not a valid"],
  ])("refused: %s", (_name, value, format, message) => {
    const result = read({ "endpoint-load-metrics": value });
    expect(result?.ok).toBe(false);
    if (result?.ok !== false) return;
    expect(result.error.format).toBe(format);
    expect(result.error.message).toContain(message);
  });

  test("an empty TEXT list is an all-zero report; an empty -bin too (gRPC's reading, unlike Envoy's BIN)", () => {
    expect(read({ "endpoint-load-metrics": "TEXT" })).toEqual({
      ok: true,
      report: report({}),
      format: "prefixed-text",
    });
    expect(read({ "endpoint-load-metrics-bin": "" })).toEqual({ ok: true, report: report({}), format: "bin" });
  });

  test("repeated headers as a transport lists them", () => {
    const bin = b64({ eps: 1 });
    const only = (name: string, values: string[]) => (n: string) => (n === name ? values : []);
    expect(readOrcaReport(only("endpoint-load-metrics-bin", [bin, bin]))).toMatchObject({
      ok: false,
      error: { message: "endpoint-load-metrics-bin appears more than once" },
    });
    expect(readOrcaReport(only("endpoint-load-metrics-json", ["{}", "{}"]))).toMatchObject({
      ok: false,
      error: { message: "endpoint-load-metrics-json appears more than once" },
    });
    // A prefixed value may not be repeated, nor mixed with unprefixed lines.
    expect(readOrcaReport(only("endpoint-load-metrics", ["TEXT eps:1", "TEXT cpu_utilization:1"]))).toMatchObject({
      ok: false,
      error: { message: "endpoint-load-metrics appears more than once with a format prefix", format: "prefixed-text" },
    });
    expect(readOrcaReport(only("endpoint-load-metrics", ["eps:1", "JSON {}"]))).toMatchObject({
      ok: false,
      error: { message: "endpoint-load-metrics appears more than once with a format prefix" },
    });
    // Unprefixed lines are one list (the earlier Envoy parser's reading).
    expect(readOrcaReport(only("endpoint-load-metrics", ["eps:1", "cpu_utilization:0.5"]))).toEqual({
      ok: true,
      report: report({ eps: 1, cpuUtilization: 0.5 }),
      format: "native",
    });
    expect(readOrcaReport(only("endpoint-load-metrics", ["eps:1", "eps:2"]))).toMatchObject({
      ok: false,
      error: { message: "endpoint-load-metrics: metric eps appears more than once" },
    });
    // grpc-js hands over the -bin value already decoded.
    const bytes = toBinary(OrcaLoadReportSchema, report({ eps: 4 }));
    expect(readOrcaReport((n) => (n === "endpoint-load-metrics-bin" ? [bytes] : []))).toEqual({
      ok: true,
      report: report({ eps: 4 }),
      format: "bin",
    });
  });
});

function catchError(run: () => unknown): OrcaParseError {
  try {
    run();
  } catch (error) {
    if (error instanceof OrcaParseError) return error;
    throw error;
  }
  throw new Error("expected an OrcaParseError");
}
