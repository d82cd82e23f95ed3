// Writes a plan (change-plan.ts) as etcd transactions (transactions.ts), each guarded by a compare: no key under the
// prefix changed after the revision the plan was read at (for the first transaction) or after the previous
// transaction (for the others). Every transaction also puts the prefix's marker key, so two writers always see each
// other, deletions included. Of two changes planned from the same revision, the first to commit wins whole; the
// other fails with EtcdConflictError before writing anything. A split change that loses half-way has written its
// first transactions (dependency-safe, see transactions.ts), and the winner, planned after them, replaced them.
import { create } from "@bufbuild/protobuf";
import type { EtcdConnection } from "../etcd/etcd-connection.js";
import { EtcdError } from "../etcd/etcd-error.js";
import {
  Compare_CompareResult,
  Compare_CompareTarget,
  CompareSchema,
  RequestOpSchema,
} from "../gen/etcdserverpb/rpc_pb.js";
import { markerKey, prefixRange } from "../keys/resource-key.js";
import type { EtcdChangePlan } from "./change-plan.js";
import {
  DEFAULT_TRANSACTION_LIMITS,
  orderOperations,
  splitIntoTransactions,
  type TransactionLimits,
} from "./transactions.js";

/** Another writer changed the prefix after the change was planned. */
export class EtcdConflictError extends Error {
  override readonly name = "EtcdConflictError";
  /** The revision the change was planned (or last written) at. */
  readonly plannedRevision: number;
  /** The transactions of this change already written (0: nothing). */
  readonly written: number;
  readonly transactions: number;
  /** What the other writer left in the marker key, when it was one of ours. */
  readonly other: string | undefined;
  constructor(
    prefix: string,
    plannedRevision: number,
    written: number,
    transactions: number,
    other: string | undefined,
  ) {
    const by = other ? ` (${other})` : "";
    const done =
      written === 0
        ? "nothing of this change was written"
        : `${written} of its ${transactions} transactions were written before`;
    super(`another writer changed ${prefix}/ after revision ${plannedRevision}${by}; ${done}: read it again and retry`);
    this.plannedRevision = plannedRevision;
    this.written = written;
    this.transactions = transactions;
    this.other = other;
  }
}

export interface ApplyOptions {
  readonly limits?: Partial<TransactionLimits>;
  /** Who writes, recorded in the marker (e.g. `xdskit apply on host`). */
  readonly writer?: string;
}

export interface ApplyResult {
  /** The revision of the last transaction (the plan's revision when there was nothing to write). */
  readonly revision: number;
  readonly transactions: number;
}

/** How many transactions a plan takes; EtcdValueTooLargeError if one of its values fits none. */
export function countTransactions(plan: EtcdChangePlan, limits: Partial<TransactionLimits> = {}): number {
  return splitIntoTransactions(orderOperations(plan.puts, plan.deletes), { ...DEFAULT_TRANSACTION_LIMITS, ...limits })
    .length;
}

export async function applyEtcdChange(
  etcd: EtcdConnection,
  plan: EtcdChangePlan,
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const limits = { ...DEFAULT_TRANSACTION_LIMITS, ...options.limits };
  const batches = splitIntoTransactions(orderOperations(plan.puts, plan.deletes), limits);
  const { key, rangeEnd } = prefixRange(plan.prefix);
  const marker = Buffer.from(markerKey(plan.prefix));
  let revision = plan.revision;
  for (const [index, batch] of batches.entries()) {
    const note = JSON.stringify({
      writer: options.writer ?? "@xdskit/etcd-source",
      time: new Date().toISOString(),
      plannedAt: plan.revision,
      transaction: `${index + 1}/${batches.length}`,
    });
    let response: Awaited<ReturnType<EtcdConnection["txn"]>>;
    try {
      response = await etcd.txn({
        compare: [
          create(CompareSchema, {
            key,
            rangeEnd,
            target: Compare_CompareTarget.MOD,
            result: Compare_CompareResult.LESS,
            targetUnion: { case: "modRevision", value: BigInt(revision + 1) },
          }),
        ],
        success: [
          ...batch,
          create(RequestOpSchema, {
            request: { case: "requestPut", value: { key: marker, value: Buffer.from(note) } },
          }),
        ],
        failure: [create(RequestOpSchema, { request: { case: "requestRange", value: { key: marker } } })],
      });
    } catch (error) {
      const failure = EtcdError.from(error, etcd.endpoint);
      const done = index === 0 ? "nothing was written" : `${index} of ${batches.length} transactions were written`;
      throw new EtcdError(failure.kind, failure.code, `${failure.message}; ${done}`, { cause: error });
    }
    if (!response.succeeded) {
      const read = response.responses[0]?.response;
      const other =
        read?.case === "responseRange" && read.value.kvs[0]
          ? Buffer.from(read.value.kvs[0].value).toString()
          : undefined;
      throw new EtcdConflictError(plan.prefix, revision, index, batches.length, other);
    }
    revision = Number(response.header?.revision ?? 0n);
  }
  return { revision, transactions: batches.length };
}
