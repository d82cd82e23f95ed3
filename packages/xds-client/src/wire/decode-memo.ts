// SotW, the byte-identical skip (docs/architecture.md#the-byte-identical-skip): an entry (an encoded `Any`) whose bytes
// are the same as one of the previous response's is not read, unwrapped, decoded or validated again; what it gave is
// reused. All of that is a function of the bytes alone (the type, the features and the decode context are the
// channel's), so reusing is the same as doing it again. Only that is skipped: what the outcome does to the cache (ACK
// state, A88 errors, deletions) is applied as for any entry.
import type { EntryOutcome } from "./entry-outcome.js";

/** FNV-1a over `bytes[start, end)`: the index key of an entry (collisions are settled by comparing bytes). */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

/** Misses by position looked up by a scan of the previous response before it is indexed (a scan costs less). */
const SCANNED_MISSES = 4;

/**
 * A response whose entries were looked for this many times beyond their position, and found less than one time in
 * eight, is not searched any further: its entries changed, and each search costs more than decoding one again.
 */
const HOPELESS_SEARCHES = 64;

/**
 * The entries of one read response: where each one's bytes are and what it gave. When every entry is a view into one
 * buffer (the default transport reads the whole response into one), the memo keeps that buffer and each entry's
 * range, not a view per entry; otherwise the views.
 */
interface Entries {
  readonly outcomes: readonly EntryOutcome[];
  /** The shared buffer (a Buffer over the views' memory), and each entry's range in it: `starts[i] + shift`. */
  readonly buffer: Buffer | undefined;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /** Added to `starts` and `ends`: a response laid out like the one before reuses its ranges. */
  readonly shift: number;
  /** The entries' own views, when they do not share a buffer. */
  readonly views: readonly Uint8Array[] | undefined;
}

const NO_RANGES = new Int32Array(0);
const NO_ENTRIES: Entries = {
  outcomes: [],
  buffer: undefined,
  starts: NO_RANGES,
  ends: NO_RANGES,
  shift: 0,
  views: [],
};

/** The memory every view is in, if they share one. */
function sharedMemory(views: readonly Uint8Array[]): ArrayBufferLike | undefined {
  const memory = views[0]?.buffer;
  for (let i = 1; i < views.length; i++) if (views[i]!.buffer !== memory) return undefined;
  return memory;
}

/**
 * How far `views` sit from the ranges of `previous` (`starts`, not counting its `shift`), when they are laid out alike
 * (as many, each as long, the same distance apart: a re-push whose changed entries kept their lengths); undefined
 * otherwise.
 */
function shiftFrom(previous: Entries, views: readonly Uint8Array[]): number | undefined {
  if (previous.buffer === undefined || views.length !== previous.outcomes.length || views.length === 0) {
    return undefined;
  }
  const { starts, ends } = previous;
  const shift = views[0]!.byteOffset - starts[0]!;
  for (let i = 0; i < views.length; i++) {
    const view = views[i]!;
    if (view.byteOffset - starts[i]! !== shift || view.length !== ends[i]! - starts[i]!) return undefined;
  }
  return shift;
}

/** The entries read, as `Entries`: ranges into their shared memory when they have one. */
function entriesOf(views: readonly Uint8Array[], outcomes: readonly EntryOutcome[], previous: Entries): Entries {
  const memory = sharedMemory(views);
  if (memory === undefined) return { outcomes, buffer: undefined, starts: NO_RANGES, ends: NO_RANGES, shift: 0, views };
  return { ...rangesOf(views, memory, previous, shiftFrom(previous, views)), outcomes };
}

/**
 * `views`, all in `memory`, as ranges: those of `previous` moved by `shift` when they are laid out alike (`shiftFrom`),
 * else their own. Without outcomes yet.
 */
function rangesOf(
  views: readonly Uint8Array[],
  memory: ArrayBufferLike,
  previous: Entries,
  shift: number | undefined,
): Entries {
  const buffer = Buffer.from(memory as ArrayBuffer);
  if (shift !== undefined) {
    return { outcomes: [], buffer, starts: previous.starts, ends: previous.ends, shift, views: undefined };
  }
  const starts = new Int32Array(views.length);
  const ends = new Int32Array(views.length);
  for (let i = 0; i < views.length; i++) {
    const view = views[i]!;
    starts[i] = view.byteOffset;
    ends[i] = view.byteOffset + view.length;
  }
  return { outcomes: [], buffer, starts, ends, shift: 0, views: undefined };
}

/** Whether two lists hold the same views, in the same order. */
function sameViews(a: readonly Uint8Array[], b: readonly Uint8Array[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether the `i`th of `entries` holds exactly `bytes`. */
function holds(entries: Entries, i: number, bytes: Uint8Array): boolean {
  const { buffer, views } = entries;
  if (buffer === undefined) {
    const view = views![i]!;
    return view.length === bytes.length && (view === bytes || Buffer.compare(view, bytes) === 0);
  }
  const start = entries.starts[i]! + entries.shift;
  const end = entries.ends[i]! + entries.shift;
  return end - start === bytes.length && buffer.compare(bytes, 0, bytes.length, start, end) === 0;
}

function hashOf(entries: Entries, i: number): number {
  if (entries.buffer === undefined) {
    const view = entries.views![i]!;
    return hashBytes(view, 0, view.length);
  }
  return hashBytes(entries.buffer, entries.starts[i]! + entries.shift, entries.ends[i]! + entries.shift);
}

/**
 * For a response laid out like `previous` (`shift` from its ranges), which entries are the same bytes: the whole run of
 * entries is compared at once, and halved where it differs, so k changed entries of n cost about k log n compares
 * (the bytes between entries, their tags and lengths, are equal in both when the layout is).
 */
function sameEntries(previous: Entries, views: readonly Uint8Array[], shift: number): Uint8Array {
  const same = new Uint8Array(views.length);
  const buffer = previous.buffer!;
  const current = Buffer.from(views[0]!.buffer as ArrayBuffer);
  const { starts, ends } = previous;
  const base = previous.shift;
  const compare = (from: number, to: number): void => {
    const start = starts[from]!;
    const end = ends[to - 1]!;
    if (buffer.compare(current, start + shift, end + shift, start + base, end + base) === 0) {
      same.fill(1, from, to);
    } else if (to - from > 1) {
      const middle = (from + to) >>> 1;
      compare(from, middle);
      compare(middle, to);
    }
  };
  compare(0, views.length);
  return same;
}

/**
 * The same position is tried first (the cheap case: a server that keeps its order); the first few misses (entries that
 * changed, usually) are looked for by a scan of the previous response; after that, its entries are indexed by a hash
 * of their bytes, once per response.
 */
export class DecodeMemo {
  private previous: Entries = NO_ENTRIES;
  /** Set by `expect` for a response laid out like the previous one: 1 where an entry's bytes are the same. */
  private same: Uint8Array | undefined;

  /** Whether `expect` found the response laid out like the previous one (for tests). */
  get laidOutAlike(): boolean {
    return this.same !== undefined;
  }
  private views: Uint8Array[] = [];
  private outcomes: EntryOutcome[] = [];
  private byHash: Map<number, number | number[]> | undefined;
  private misses = 0;
  /** Entries looked for beyond their position, and how many of them were found. */
  private searches = 0;
  private found = 0;
  /** What `expect` worked out, for `rotate` to reuse when the entries kept are those it was given. */
  private expected: { readonly views: readonly Uint8Array[]; readonly entries: Entries } | undefined;

  /** `scannedMisses`: for tests, which check both ways of finding an entry. */
  constructor(private readonly scannedMisses = SCANNED_MISSES) {}

  /**
   * Before a response's entries are looked up one by one: when they are laid out like the previous response's, finds
   * at once which are unchanged (most of a re-push), by comparing runs of entries rather than each.
   */
  expect(entries: readonly Uint8Array[]): void {
    const memory = sharedMemory(entries);
    const shift = memory === undefined ? undefined : shiftFrom(this.previous, entries);
    this.same = shift === undefined ? undefined : sameEntries(this.previous, entries, shift);
    this.expected =
      memory === undefined ? undefined : { views: entries, entries: rangesOf(entries, memory, this.previous, shift) };
  }

  /**
   * What the `index`th entry gave if its bytes were in the previous response; undefined when they were not, and also
   * when looking further than its position is not worth it: in a response laid out like the previous one (`expect`),
   * an entry whose position holds other bytes changed (a search would cost about as much as decoding it again, and
   * find it only where two entries of equal length swapped places); and in a response whose searches keep failing.
   */
  find(index: number, bytes: Uint8Array): EntryOutcome | undefined {
    const previous = this.previous;
    const same = this.same;
    if (same !== undefined) return same[index] === 1 ? previous.outcomes[index] : undefined;
    const count = previous.outcomes.length;
    if (index < count && holds(previous, index, bytes)) return previous.outcomes[index];
    if (count === 0 || (this.searches >= HOPELESS_SEARCHES && this.found * 8 < this.searches)) return undefined;
    this.searches += 1;
    const i = this.search(bytes);
    if (i === undefined) return undefined;
    this.found += 1;
    return previous.outcomes[i];
  }

  /** Where the previous response held `bytes` (not at the position tried first). */
  private search(bytes: Uint8Array): number | undefined {
    const previous = this.previous;
    const count = previous.outcomes.length;
    if (this.misses < this.scannedMisses) {
      this.misses += 1;
      for (let i = 0; i < count; i++) if (holds(previous, i, bytes)) return i;
      return undefined;
    }
    const found = this.index().get(hashBytes(bytes, 0, bytes.length));
    if (found === undefined) return undefined;
    if (typeof found === "number") return holds(previous, found, bytes) ? found : undefined;
    return found.find((candidate) => holds(previous, candidate, bytes));
  }

  /** Records what the `index`th entry of the response being read gave. */
  keep(index: number, bytes: Uint8Array, outcome: EntryOutcome): void {
    this.views[index] = bytes;
    this.outcomes[index] = outcome;
  }

  /** Call after each response read: its entries become the reference for the next one. */
  rotate(): void {
    const expected = this.expected;
    this.previous =
      expected !== undefined && sameViews(expected.views, this.views)
        ? { ...expected.entries, outcomes: this.outcomes }
        : entriesOf(this.views, this.outcomes, this.previous);
    this.byHash = undefined;
    this.discard();
  }

  /** The response could not be read: the previous one stays the reference. */
  discard(): void {
    this.same = undefined;
    this.expected = undefined;
    this.views = [];
    this.outcomes = [];
    this.misses = 0;
    this.searches = 0;
    this.found = 0;
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
