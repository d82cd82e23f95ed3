// Everything under a prefix at one revision, read in pages (etcd has no response size limit of its own: pages keep
// each response, and the memory of one read, bounded).
import type { EtcdConnection } from "../etcd/etcd-connection.js";
import { EtcdError } from "../etcd/etcd-error.js";
import { prefixRange } from "../keys/resource-key.js";
import type { KeyChange } from "./served-keys.js";

export interface PrefixSnapshot {
  /** The store's revision every key was read at. */
  readonly revision: number;
  readonly kvs: readonly KeyChange[];
}

/** Keys per page. */
export const DEFAULT_PAGE_SIZE = 500;

const ZERO = new Uint8Array([0]);

/**
 * Reads every key under `prefix` at one revision: the first page at the newest (or at `at`), the others at the same
 * revision. A compaction past the newest revision during the read starts it again; past `at`, it is an error.
 */
export async function readPrefix(
  etcd: EtcdConnection,
  prefix: string,
  pageSize = DEFAULT_PAGE_SIZE,
  at?: number,
): Promise<PrefixSnapshot> {
  const { key: start, rangeEnd } = prefixRange(prefix);
  for (;;) {
    const kvs: KeyChange[] = [];
    let revision = at ?? 0;
    let key: Uint8Array = start;
    try {
      for (;;) {
        const page = await etcd.range({ key, rangeEnd, limit: BigInt(pageSize), revision: BigInt(revision) });
        if (revision === 0) revision = page.revision;
        for (const kv of page.kvs) {
          kvs.push({ key: Buffer.from(kv.key).toString("utf8"), value: kv.value, modRevision: Number(kv.modRevision) });
        }
        const last = page.kvs.at(-1);
        if (!page.more || last === undefined) break;
        key = Buffer.concat([last.key, ZERO]);
      }
      return { revision, kvs };
    } catch (error) {
      if (error instanceof EtcdError && error.kind === "compacted" && at === undefined) continue;
      throw error;
    }
  }
}
