// How a change is cut into etcd transactions. One transaction is atomic: a replica applies it as one change, so a
// change that fits (etcd's defaults: 128 operations, 1.5 MiB) reaches clients whole. A larger one is split, and the
// order keeps every intermediate state usable (docs/decisions.md#etcd-writes):
//   1. puts first, leaves before what refers to them: endpoints (ClusterLoadAssignment), clusters, route
//      configurations, listeners; other types (secrets, DPDS, ...) with the leaves;
//   2. then deletions, in the reverse order: listeners first, endpoints last.
// So a resource is written before anything that names it changes, and removed only after what named it is gone.
import { create, toBinary } from "@bufbuild/protobuf";
import { type RequestOp, RequestOpSchema } from "../gen/etcdserverpb/rpc_pb.js";
import { TYPE_URL_PREFIX } from "../keys/resource-key.js";
import type { PlannedDelete, PlannedPut } from "./change-plan.js";

export interface TransactionLimits {
  /** etcd's `--max-txn-ops`. Default 128. */
  readonly maxTxnOps: number;
  /** etcd's `--max-request-bytes`. Default 1.5 MiB. */
  readonly maxRequestBytes: number;
}

export const DEFAULT_TRANSACTION_LIMITS: TransactionLimits = Object.freeze({
  maxTxnOps: 128,
  maxRequestBytes: 1.5 * 1024 * 1024,
});

/**
 * Room left in each transaction for what etcd adds around it (its raft request header: ids, user name) and for the
 * compare and the marker put that every transaction of a change carries.
 */
export const TRANSACTION_OVERHEAD_BYTES = 2048;

/** A value that cannot fit one etcd request, even alone. */
export class EtcdValueTooLargeError extends Error {
  override readonly name = "EtcdValueTooLargeError";
  readonly key: string;
  readonly bytes: number;
  readonly limit: number;
  constructor(key: string, bytes: number, limit: number) {
    super(
      `${key}: ${bytes} bytes, more than one etcd request can carry (${limit} bytes with etcd's --max-request-bytes ` +
        `of ${limit + TRANSACTION_OVERHEAD_BYTES}); nothing was written`,
    );
    this.key = key;
    this.bytes = bytes;
    this.limit = limit;
  }
}

const RANK: Readonly<Record<string, number>> = {
  "envoy.config.endpoint.v3.ClusterLoadAssignment": 0,
  "envoy.config.cluster.v3.Cluster": 1,
  "envoy.config.route.v3.RouteConfiguration": 2,
  "envoy.config.route.v3.ScopedRouteConfiguration": 2,
  "envoy.config.route.v3.VirtualHost": 2,
  "envoy.config.listener.v3.Listener": 3,
};

function rankOf(typeUrl: string | undefined): number {
  return typeUrl === undefined ? 0 : (RANK[typeUrl.slice(TYPE_URL_PREFIX.length)] ?? 0);
}

function sizeOf(op: RequestOp): number {
  const bytes = toBinary(RequestOpSchema, op).length;
  // The repeated field's tag, and the varint of the length.
  return 1 + Math.ceil(Math.max(1, Math.log2(bytes + 1)) / 7) + bytes;
}

/** The operations of a change in dependency-safe order (see the file's header). */
export function orderOperations(puts: readonly PlannedPut[], deletes: readonly PlannedDelete[]): RequestOp[] {
  const sortedPuts = [...puts].sort((a, b) => rankOf(a.resource.typeUrl) - rankOf(b.resource.typeUrl));
  const sortedDeletes = [...deletes].sort((a, b) => rankOf(b.resource?.typeUrl) - rankOf(a.resource?.typeUrl));
  return [
    ...sortedPuts.map((p) =>
      create(RequestOpSchema, { request: { case: "requestPut", value: { key: Buffer.from(p.key), value: p.value } } }),
    ),
    ...sortedDeletes.map((d) =>
      create(RequestOpSchema, { request: { case: "requestDeleteRange", value: { key: Buffer.from(d.key) } } }),
    ),
  ];
}

/**
 * The operations cut, in order, into transactions within `limits`, each leaving one operation and
 * TRANSACTION_OVERHEAD_BYTES for the compare and marker. EtcdValueTooLargeError for an operation that fits none.
 */
export function splitIntoTransactions(ops: readonly RequestOp[], limits: TransactionLimits): RequestOp[][] {
  const maxOps = Math.max(1, limits.maxTxnOps - 1);
  const maxBytes = limits.maxRequestBytes - TRANSACTION_OVERHEAD_BYTES;
  const batches: RequestOp[][] = [];
  let batch: RequestOp[] = [];
  let bytes = 0;
  for (const op of ops) {
    const size = sizeOf(op);
    if (size > maxBytes) {
      const key = op.request.case === "requestPut" ? Buffer.from(op.request.value.key).toString() : "a deletion";
      throw new EtcdValueTooLargeError(key, size, maxBytes);
    }
    if (batch.length >= maxOps || bytes + size > maxBytes) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(op);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
