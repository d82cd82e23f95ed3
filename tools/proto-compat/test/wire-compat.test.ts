// Every message, enum, field, enum value and method that proto/ defines must exist upstream with the same full name,
// number, type, label and oneof. The upstream reference is the envoy-api / cncf/xds / googleapis snapshot that
// @grpc/grpc-js-xds ships under deps/ (envoy data-plane-api f8b75d1, 2024-07-19).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildOurFiles, compareWithUpstream } from "../src/compare.js";

const protoDir = fileURLToPath(new URL("../../../proto", import.meta.url));

/** The only differences allowed, each with its reason. The test fails if one is missing or another appears. */
const allowed: Record<string, string> = {
  "message envoy.service.discovery.v3.ResourceError: not found upstream":
    "added by envoy #37818 (2025-01-02, xRFC TP3), after the snapshot",
  "field envoy.service.discovery.v3.DiscoveryResponse.resource_errors (= 7): not found upstream":
    "added by envoy #37818 (2025-01-02, xRFC TP3), after the snapshot",
  "field envoy.service.discovery.v3.DeltaDiscoveryResponse.resource_errors (= 9): not found upstream":
    "added by envoy #37818 (2025-01-02, xRFC TP3), after the snapshot",
  "enum value envoy.admin.v3.ClientResourceStatus.RECEIVED_ERROR (= 5): not found upstream":
    "added by envoy #37858 and renamed by #37871 (2025-01), after the snapshot",
  "enum value envoy.admin.v3.ClientResourceStatus.TIMEOUT (= 6): not found upstream":
    "added by envoy #37871 (2025-01-06), after the snapshot",
  "enum value envoy.service.status.v3.ClientConfigStatus.CLIENT_RECEIVED_ERROR (= 4): not found upstream":
    "added by envoy #37818 (2025-01-02), after the snapshot",
  "file envoy/config/dynamic_parameters/v3/dynamic_parameters.proto: no upstream file at this path":
    "DPDS exists nowhere upstream (envoy PR #17192 was never merged); see docs/decisions.md#the-dpds-resource",
  "message envoy.config.dynamic_parameters.v3.DynamicParameterConstraintsMap: not found upstream":
    "DPDS exists nowhere upstream (envoy PR #17192 was never merged); see docs/decisions.md#the-dpds-resource",
  "file xdskit/client/v1/sotw_response.proto: no upstream file at this path":
    "xdskit's own reading of DiscoveryResponse, not an xDS message; checked against DiscoveryResponse below",
  "message xdskit.client.v1.SotwResponseBytes: not found upstream":
    "xdskit's own reading of DiscoveryResponse, not an xDS message; checked against DiscoveryResponse below",
  "file xdskit/client/v1/delta_response.proto: no upstream file at this path":
    "xdskit's own reading of DeltaDiscoveryResponse, not an xDS message; checked against it below",
  "message xdskit.client.v1.DeltaResponseBytes: not found upstream":
    "xdskit's own reading of DeltaDiscoveryResponse, not an xDS message; checked against it below",
};

describe("proto/ is wire-compatible with upstream", () => {
  const files = buildOurFiles(protoDir);
  const differences = compareWithUpstream(files);

  it("defines the files the suite relies on", () => {
    const names = files.map((f) => f.proto.name);
    for (const required of [
      "google/rpc/status.proto",
      "envoy/service/discovery/v3/discovery.proto",
      "envoy/service/discovery/v3/ads.proto",
      "envoy/service/status/v3/csds.proto",
      "envoy/admin/v3/config_dump_shared.proto",
      "envoy/service/load_stats/v3/lrs.proto",
      "envoy/config/endpoint/v3/load_report.proto",
      "xds/data/orca/v3/orca_load_report.proto",
      "xds/service/orca/v3/orca.proto",
      "envoy/config/core/v3/base.proto",
      "envoy/config/listener/v3/listener.proto",
      "envoy/config/route/v3/route.proto",
      "envoy/config/cluster/v3/cluster.proto",
      "envoy/config/endpoint/v3/endpoint.proto",
      "envoy/config/dynamic_parameters/v3/dynamic_parameters.proto",
      // The mesh layer (A36 server Listeners, A29 TLS, A41 RBAC).
      "envoy/config/listener/v3/listener_components.proto",
      "envoy/config/core/v3/address.proto",
      "envoy/extensions/transport_sockets/tls/v3/tls.proto",
      "envoy/extensions/transport_sockets/tls/v3/common.proto",
      "envoy/config/rbac/v3/rbac.proto",
      "envoy/extensions/filters/http/rbac/v3/rbac.proto",
      "envoy/type/matcher/v3/path.proto",
      "envoy/type/matcher/v3/filter_state.proto",
      "google/api/expr/v1alpha1/syntax.proto",
      "google/api/expr/v1alpha1/checked.proto",
      "xds/type/matcher/v3/matcher.proto",
    ]) {
      expect(names).toContain(required);
    }
  });

  it("differs from upstream only where the allowed list says why", () => {
    const unexpected = differences.filter((d) => !(d in allowed));
    expect(unexpected).toEqual([]);
  });

  it("still needs every entry of the allowed list", () => {
    const stale = Object.keys(allowed).filter((d) => !differences.includes(d));
    expect(stale).toEqual([]);
  });
});

describe("xdskit's own messages", () => {
  it("SotwResponseBytes reads a DiscoveryResponse: the same fields, resources as the bytes of each Any", () => {
    const messages = buildOurFiles(protoDir).flatMap((f) => f.messages);
    const find = (name: string) => messages.find((m) => m.typeName === name);
    const fieldsOf = (name: string) =>
      (find(name)?.fields ?? []).map((f) => ({
        number: f.number,
        name: f.name,
        list: f.fieldKind === "list",
        type:
          f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message")
            ? (f.message?.typeName ?? "")
            : f.proto.type,
      }));
    const response = fieldsOf("envoy.service.discovery.v3.DiscoveryResponse");
    const bytes = fieldsOf("xdskit.client.v1.SotwResponseBytes");
    expect(response.length).toBeGreaterThan(6);
    // Both length-delimited on the wire: the same bytes read as either.
    const asBytes = response.map((f) =>
      f.type === "google.protobuf.Any" ? { ...f, type: bytes.find((b) => b.number === f.number)?.type } : f,
    );
    expect(bytes).toEqual(asBytes);
    expect(bytes.find((f) => f.name === "resources")).toMatchObject({ number: 2, list: true, type: 12 });
  });

  it("DeltaResponseBytes reads a DeltaDiscoveryResponse: the same fields, resources as the bytes of each Resource", () => {
    const messages = buildOurFiles(protoDir).flatMap((f) => f.messages);
    const fieldsOf = (name: string) =>
      (messages.find((m) => m.typeName === name)?.fields ?? []).map((f) => ({
        number: f.number,
        name: f.name,
        list: f.fieldKind === "list",
        type:
          f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message")
            ? (f.message?.typeName ?? "")
            : f.proto.type,
      }));
    const response = fieldsOf("envoy.service.discovery.v3.DeltaDiscoveryResponse");
    const bytes = fieldsOf("xdskit.client.v1.DeltaResponseBytes");
    expect(response.length).toBeGreaterThan(6);
    // Both length-delimited on the wire: the same bytes read as either.
    const asBytes = response.map((f) =>
      f.type === "envoy.service.discovery.v3.Resource"
        ? { ...f, type: bytes.find((b) => b.number === f.number)?.type }
        : f,
    );
    expect(bytes).toEqual(asBytes);
    expect(bytes.find((f) => f.name === "resources")).toMatchObject({ number: 2, list: true, type: 12 });
  });
});

describe("the checker itself", () => {
  const scratch = mkdtempSync(join(tmpdir(), "xdskit-proto-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  function mutate(path: string, from: RegExp, to: string): string[] {
    const dir = join(scratch, `case-${Math.random().toString(36).slice(2)}`);
    cpSync(protoDir, dir, { recursive: true });
    const file = join(dir, path);
    const before = readFileSync(file, "utf8");
    const after = before.replace(from, to);
    expect(after).not.toBe(before);
    writeFileSync(file, after);
    return compareWithUpstream(buildOurFiles(dir)).filter((d) => !(d in allowed));
  }

  it("fails when a field number changes", () => {
    const found = mutate("envoy/service/discovery/v3/discovery.proto", /string type_url = 4;/, "string type_url = 40;");
    expect(found).toContain("field envoy.service.discovery.v3.DiscoveryRequest.type_url: number 40, upstream 4");
  });

  it("fails when a field type changes", () => {
    const found = mutate(
      "xds/data/orca/v3/orca_load_report.proto",
      /double cpu_utilization = 1;/,
      "float cpu_utilization = 1;",
    );
    expect(found).toContain("field xds.data.orca.v3.OrcaLoadReport.cpu_utilization: type float, upstream double");
  });

  it("fails when an enum value changes", () => {
    const found = mutate("envoy/admin/v3/config_dump_shared.proto", /ACKED = 3;/, "ACKED = 7;");
    expect(found).toContain("enum value envoy.admin.v3.ClientResourceStatus.ACKED: number 7, upstream 3");
  });
});
