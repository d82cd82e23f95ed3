// The change log a resource set keeps per type, which plans of few changes read instead of comparing everything.
import { create } from "@bufbuild/protobuf";
import { xdsRegistry } from "@xdskit/protos";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { expect, test } from "vitest";
import { CDS_TYPE_URL } from "../type-urls.js";
import { ResourceSetImpl } from "./resource-set.js";

function newSet() {
  let version = 0;
  return new ResourceSetImpl({ registry: xdsRegistry, nextVersion: () => ++version, onChange: () => {} });
}
const cluster = (name: string, eds = "") => create(ClusterSchema, { name, edsClusterConfig: { serviceName: eds } });

test("changedSince lists the names changed after a version, in the order they last changed", () => {
  const set = newSet();
  set.setResources([cluster("a"), cluster("b"), cluster("c")]);
  const v1 = Number(set.typeVersion(CDS_TYPE_URL));
  set.setResource(cluster("b", "x"));
  set.removeResource(CDS_TYPE_URL, "c");
  set.setResourceError(CDS_TYPE_URL, "d", { code: 5 });
  set.setResource(cluster("b", "y"));
  expect(set.changedSince(CDS_TYPE_URL, v1)).toEqual(["c", "d", "b"]);
  expect(set.changedSince(CDS_TYPE_URL, Number(set.typeVersion(CDS_TYPE_URL)))).toEqual([]);
  // Unchanged bytes are no change.
  const before = set.typeVersion(CDS_TYPE_URL);
  set.setResource(cluster("a"));
  expect(set.typeVersion(CDS_TYPE_URL)).toBe(before);
});

test("a version the type never had, or one the bounded log forgot, is unknown", () => {
  const set = newSet();
  set.setResource(cluster("a"));
  const first = Number(set.typeVersion(CDS_TYPE_URL));
  expect(set.changedSince(CDS_TYPE_URL, 999)).toBeUndefined();
  expect(set.changedSince("other", first)).toBeUndefined();
  for (let i = 0; i < 70; i++) set.setResource(cluster("a", `v${i}`));
  expect(set.changedSince(CDS_TYPE_URL, first)).toBeUndefined();
  const recent = Number(set.typeVersion(CDS_TYPE_URL));
  set.setResource(cluster("b"));
  expect(set.changedSince(CDS_TYPE_URL, recent)).toEqual(["b"]);
});
