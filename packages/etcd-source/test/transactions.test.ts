// How a change is cut into etcd transactions (src/write/transactions.ts): puts leaves first, deletions roots first,
// within the operation and byte limits, and a value too large for any transaction is refused by name.
import { describe, expect, it } from "vitest";
import {
  EtcdValueTooLargeError,
  type PlannedDelete,
  type PlannedPut,
  TRANSACTION_OVERHEAD_BYTES,
} from "../src/index.js";
import { orderOperations, splitIntoTransactions } from "../src/write/transactions.js";

const T = (name: string) => `type.googleapis.com/envoy.config.${name}`;
const LISTENER = T("listener.v3.Listener");
const ROUTE = T("route.v3.RouteConfiguration");
const CLUSTER = T("cluster.v3.Cluster");
const ENDPOINTS = T("endpoint.v3.ClusterLoadAssignment");

function put(typeUrl: string, name: string, bytes = 10): PlannedPut {
  return { key: `/xds/${typeUrl}/${name}`, resource: { typeUrl, name }, value: new Uint8Array(bytes), kind: "added" };
}
function del(typeUrl: string, name: string): PlannedDelete {
  return { key: `/xds/${typeUrl}/${name}`, resource: { typeUrl, name } };
}
function keysOf(ops: ReturnType<typeof orderOperations>): string[] {
  return ops.map(
    (op) =>
      `${op.request.case === "requestPut" ? "put" : "delete"} ${Buffer.from(
        (op.request.value as { key: Uint8Array }).key,
      )
        .toString()
        .split("/")
        .pop()}`,
  );
}

describe("transactions", () => {
  it("puts endpoints, clusters, routes then listeners, and deletes in the reverse order after every put", () => {
    const ops = orderOperations(
      [put(LISTENER, "l"), put(ROUTE, "r"), put(ENDPOINTS, "e"), put(CLUSTER, "c")],
      [del(ENDPOINTS, "old-e"), del(CLUSTER, "old-c"), del(LISTENER, "old-l"), del(ROUTE, "old-r")],
    );
    expect(keysOf(ops)).toEqual([
      "put e",
      "put c",
      "put r",
      "put l",
      "delete old-l",
      "delete old-r",
      "delete old-c",
      "delete old-e",
    ]);
  });

  it("keeps one operation of each transaction for the marker", () => {
    const ops = orderOperations(
      Array.from({ length: 10 }, (_, i) => put(CLUSTER, `c${i}`)),
      [],
    );
    const batches = splitIntoTransactions(ops, { maxTxnOps: 4, maxRequestBytes: 1 << 20 });
    expect(batches.map((b) => b.length)).toEqual([3, 3, 3, 1]);
    expect(keysOf(batches.flat())).toEqual(keysOf(ops));
  });

  it("cuts by bytes within etcd's request limit, less the overhead", () => {
    const ops = orderOperations(
      Array.from({ length: 6 }, (_, i) => put(CLUSTER, `c${i}`, 1000)),
      [],
    );
    const batches = splitIntoTransactions(ops, { maxTxnOps: 128, maxRequestBytes: TRANSACTION_OVERHEAD_BYTES + 2500 });
    expect(batches.map((b) => b.length)).toEqual([2, 2, 2]);
  });

  it("refuses a value no transaction can carry, naming its key", () => {
    const ops = orderOperations([put(CLUSTER, "small"), put(CLUSTER, "huge", 5000)], []);
    const split = () =>
      splitIntoTransactions(ops, { maxTxnOps: 128, maxRequestBytes: TRANSACTION_OVERHEAD_BYTES + 4000 });
    expect(split).toThrow(EtcdValueTooLargeError);
    expect(split).toThrow(/huge: 50\d\d bytes/);
  });
});
