// SotW, the byte-identical skip (docs/architecture.md#the-byte-identical-skip): an entry (an encoded `Any`) whose bytes
// are the same as one of the previous response's is not read, unwrapped, decoded or validated again; what it gave is
// reused. All of that is a function of the bytes alone (the type, the features and the decode context are the
// channel's), so reusing is the same as doing it again. Only that is skipped: what the outcome does to the cache (ACK
// state, A88 errors, deletions) is applied as for any entry.
import type { EntryOutcome } from "./decoded-response.js";

/** FNV-1a over `bytes[start, end)`: the index key of an entry (collisions are settled by comparing bytes). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

/** Misses by position looked up by a scan of the previous response before it is indexed (a scan costs less). */
const SCANNED_MISSES = 4;

/**
 * The entries of one read response: where each one's bytes are and what it gave. When every entry is a view into one
 * buffer (the default transport reads the whole response into one), the memo keeps that buffer and each entry's
 * range, not a view per entry; otherwise the views.
 */
interface Entries {
  readonly outcomes: readonly EntryOutcome[];
  /** The shared buffer (a Buffer over the views' memory), and each entry's range in it. */
  readonly buffer: Buffer | undefined;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /** The entries' own views, when they do not share a buffer. */
  readonly views: readonly Uint8Array[] | undefined;
}

const NO_ENTRIES: Entries = {
  outcomes: [],
  buffer: undefined,
  starts: new Int32Array(0),
  ends: new Int32Array(0),
  views: [],
};

/** The entries read, as `Entries`: ranges into their shared memory when they have one. */
function entriesOf(views: readonly Uint8Array[], outcomes: readonly EntryOutcome[]): Entries {
  const memory = views[0]?.buffer;
  if (memory === undefined || views.some((view) => view.buffer !== memory)) {
    return { outcomes, buffer: undefined, starts: NO_ENTRIES.starts, ends: NO_ENTRIES.ends, views };
  }
  const starts = new Int32Array(views.length);
  const ends = new Int32Array(views.length);
  for (let i = 0; i < views.length; i++) {
    const view = views[i]!;
    starts[i] = view.byteOffset;
    ends[i] = view.byteOffset + view.length;
  }
  return { outcomes, buffer: Buffer.from(memory as ArrayBuffer), starts, ends, views: undefined };
}

/** Whether the `i`th of `entries` holds exactly `bytes`. */
function holds(entries: Entries, i: number, bytes: Uint8Array): boolean {
  const { buffer, views } = entries;
  if (buffer === undefined) {
    const view = views![i]!;
    return view.length === bytes.length && (view === bytes || Buffer.compare(view, bytes) === 0);
  }
  const start = entries.starts[i]!;
  const end = entries.ends[i]!;
  return end - start === bytes.length && buffer.compare(bytes, 0, bytes.length, start, end) === 0;
}

function hashOf(entries: Entries, i: number): number {
  if (entries.buffer === undefined) {
    const view = entries.views![i]!;
    return hashBytes(view, 0, view.length);
  }
  return hashBytes(entries.buffer, entries.starts[i]!, entries.ends[i]!);
}

/**
 * The same position is tried first (the cheap case: a server that keeps its order); the first few misses (entries that
 * changed, usually) are looked for by a scan of the previous response; after that, its entries are indexed by a hash
 * of their bytes, once per response.
 */
export class DecodeMemo {
  private previous: Entries = NO_ENTRIES;
  private views: Uint8Array[] = [];
  private outcomes: EntryOutcome[] = [];
  private byHash: Map<number, number | number[]> | undefined;
  private misses = 0;

  /** `scannedMisses`: for tests, which check both ways of finding an entry. */
  constructor(private readonly scannedMisses = SCANNED_MISSES) {}

  /** What the `index`th entry gave if its bytes were in the previous response. */
  find(index: number, bytes: Uint8Array): EntryOutcome | undefined {
    const previous = this.previous;
    const count = previous.outcomes.length;
    if (index < count && holds(previous, index, bytes)) return previous.outcomes[index];
    if (count === 0) return undefined;
    if (this.misses < this.scannedMisses) {
      this.misses += 1;
      for (let i = 0; i < count; i++) if (holds(previous, i, bytes)) return previous.outcomes[i];
      return undefined;
    }
    const found = this.index().get(hashBytes(bytes, 0, bytes.length));
    if (found === undefined) return undefined;
    if (typeof found === "number") return holds(previous, found, bytes) ? previous.outcomes[found] : undefined;
    const i = found.find((candidate) => holds(previous, candidate, bytes));
    return i === undefined ? undefined : previous.outcomes[i];
  }

  /** Records what the `index`th entry of the response being read gave. */
  keep(index: number, bytes: Uint8Array, outcome: EntryOutcome): void {
    this.views[index] = bytes;
    this.outcomes[index] = outcome;
  }

  /** Call after each response read: its entries become the reference for the next one. */
  rotate(): void {
    this.previous = entriesOf(this.views, this.outcomes);
    this.views = [];
    this.outcomes = [];
    this.byHash = undefined;
    this.misses = 0;
  }

  /** The response could not be read: the previous one stays the reference. */
  discard(): void {
    this.views = [];
    this.outcomes = [];
    this.misses = 0;
  }

  private index(): Map<number, number | number[]> {
    if (this.byHash) return this.byHash;
    const byHash = new Map<number, number | number[]>();
    const previous = this.previous;
    for (let i = 0; i < previous.outcomes.length; i++) {
      const hash = hashOf(previous, i);
      const held = byHash.get(hash);
      if (held === undefined) byHash.set(hash, i);
      else if (typeof held === "number") byHash.set(hash, [held, i]);
      else held.push(i);
    }
    this.byHash = byHash;
    return byHash;
  }
}
