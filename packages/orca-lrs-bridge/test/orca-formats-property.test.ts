// Every header form carries the same report: for a random report (in and out of A51's ranges), its base64 binary in
// `endpoint-load-metrics-bin`, today's `endpoint-load-metrics` with a BIN / TEXT / JSON prefix, and the earlier
// unprefixed text and `endpoint-load-metrics-json` all read back to one report; and `-bin` wins beside any of them.
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import fc from "fast-check";
import { expect, test } from "vitest";
import { readOrcaReportFromHeaders } from "../src/index.js";

// Native values are finite decimals; -0 prints as "0", so it is left out.
const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => (v === 0 ? 0 : v));
const value = fc.oneof(
  finite,
  fc.double({ min: 0, max: 1, noNaN: true }).map((v) => (v === 0 ? 0 : v)),
);
// Names the native form can carry: no comma, colon or surrounding space.
const key = fc.stringMatching(/^[A-Za-z0-9_.\-/]{1,10}$/);

const reports = fc
  .record(
    {
      cpuUtilization: value,
      memUtilization: value,
      applicationUtilization: value,
      rpsFractional: value,
      eps: value,
      namedMetrics: fc.dictionary(key, finite, { maxKeys: 5 }),
    },
    { requiredKeys: [] },
  )
  .map((init) => create(OrcaLoadReportSchema, init));

const NATIVE_NAMES: [keyof OrcaLoadReport & string, string][] = [
  ["cpuUtilization", "cpu_utilization"],
  ["memUtilization", "mem_utilization"],
  ["applicationUtilization", "application_utilization"],
  ["rpsFractional", "rps_fractional"],
  ["eps", "eps"],
];

function nativeText(report: OrcaLoadReport, spaces: boolean): string {
  const entries: string[] = [];
  for (const [field, name] of NATIVE_NAMES) {
    const v = report[field] as number;
    if (v !== 0) entries.push(`${name}:${String(v)}`);
  }
  for (const [k, v] of Object.entries(report.namedMetrics)) entries.push(`named_metrics.${k}:${String(v)}`);
  return entries.join(spaces ? " , " : ",");
}

function read(name: string, value: string): OrcaLoadReport {
  const result = readOrcaReportFromHeaders(new Headers({ [name]: value }));
  if (result === undefined || !result.ok)
    throw new Error(`${name} "${value}" not read: ${result?.ok === false ? result.error.message : "absent"}`);
  return result.report;
}

const base64 = (report: OrcaLoadReport) => Buffer.from(toBinary(OrcaLoadReportSchema, report)).toString("base64");

test("every header form of a report reads back the same", () => {
  fc.assert(
    fc.property(reports, fc.boolean(), (report, spaces) => {
      const fromBin = read("endpoint-load-metrics-bin", base64(report));
      const json = toJsonString(OrcaLoadReportSchema, report);
      expect(read("endpoint-load-metrics", nativeText(report, spaces))).toEqual(fromBin);
      expect(read("endpoint-load-metrics-json", json)).toEqual(fromBin);
      expect(read("endpoint-load-metrics", `TEXT ${nativeText(report, spaces)}`)).toEqual(fromBin);
      expect(read("endpoint-load-metrics", `JSON ${json}`)).toEqual(fromBin);
      // Envoy refuses an empty BIN value: an empty report has no BIN form.
      if (toBinary(OrcaLoadReportSchema, report).length > 0) {
        expect(read("endpoint-load-metrics", `BIN ${base64(report)}`)).toEqual(fromBin);
      }
    }),
    { numRuns: 300 },
  );
}, 120_000); // CPU-bound: 7 s in npm test with the machine busy, 19 s at load average 45

test("-bin wins beside any endpoint-load-metrics value, read or not", () => {
  fc.assert(
    fc.property(reports, fc.string({ maxLength: 40 }), (report, other) => {
      const result = readOrcaReportFromHeaders(
        new Headers({ "endpoint-load-metrics-bin": base64(report), "endpoint-load-metrics": other.trim() || "x" }),
      );
      expect(result).toEqual({ ok: true, report: read("endpoint-load-metrics-bin", base64(report)), format: "bin" });
    }),
    { numRuns: 200 },
  );
}, 60_000);
