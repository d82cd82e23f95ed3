// The load store reads a decoded report's named metrics from the flat list the decoder attaches (its fast path),
// and any other report's by walking the map. Both must add up the same, whatever the report: merged encodings with
// repeated keys, NaN values the decoder drops, keys a cluster selects or not, A85 or A64.
import { create, toBinary } from "@bufbuild/protobuf";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import fc from "fast-check";
import { expect, test } from "vitest";
import { createLoadStore, decodeOrcaLoadReport, type OrcaMetrics, type OrcaPropagationConfig } from "../src/index.js";

const KEYS = ["a", "b", "c", "queue"];
const encoded = fc
  .record({
    cpuUtilization: fc.double({ min: 0, max: 2, noNaN: true }),
    namedMetrics: fc.dictionary(
      fc.constantFrom(...KEYS),
      fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(Number.NaN)),
      {
        maxKeys: 3,
      },
    ),
  })
  .map((init) => toBinary(OrcaLoadReportSchema, create(OrcaLoadReportSchema, init)));
// Several encodings back to back decode as one merged report (a key may repeat).
const reportBytes = fc.array(encoded, { minLength: 1, maxLength: 3 }).map((parts) => Buffer.concat(parts));
const propagation: fc.Arbitrary<OrcaPropagationConfig> = fc.oneof(
  fc.constant({ mode: "a64" as const }),
  fc.constant({ cpuUtilization: true, namedMetrics: "all" as const }),
  fc.subarray(KEYS).map((keys) => ({ namedMetrics: keys })),
);

function record(config: OrcaPropagationConfig, reports: OrcaMetrics[]) {
  const server = { serverUri: "lrs:1" };
  const store = createLoadStore({ env: {} });
  const stats = store.localityStats({ server, clusterName: "c", locality: {}, propagation: config });
  for (const report of reports) {
    stats.callStarted();
    stats.callFinished("ok", report);
  }
  return store.takeReport(server, { sendAllClusters: true, clusters: new Set() }).clusterStats[0]
    ?.upstreamLocalityStats;
}

test("a decoded report and a plain copy of it add up the same", () => {
  fc.assert(
    fc.property(fc.array(reportBytes, { minLength: 1, maxLength: 4 }), propagation, (all, config) => {
      const decoded = all.map((bytes) => decodeOrcaLoadReport(bytes));
      const plain = decoded.map((r) => ({ ...r, namedMetrics: { ...r.namedMetrics } }));
      expect(record(config, decoded)).toEqual(record(config, plain));
    }),
    { numRuns: 500 },
  );
}, 60_000); // CPU-bound: generous on a loaded machine

test("a decoded report is recorded as it was decoded, even if its map is changed afterwards", () => {
  const report = decodeOrcaLoadReport(
    toBinary(OrcaLoadReportSchema, create(OrcaLoadReportSchema, { namedMetrics: { a: 1 } })),
  );
  (report.namedMetrics as Record<string, number>).a = 5;
  (report.namedMetrics as Record<string, number>).b = 2;
  const [locality] = record({ namedMetrics: "all" }, [report]) ?? [];
  expect(locality?.loadMetricStats.map((m) => [m.metricName, m.totalMetricValue])).toEqual([["named_metrics.a", 1]]);
});
