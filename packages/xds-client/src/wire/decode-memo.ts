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

/** A response's entries: the `i`th is `memory[starts[i], ends[i])`. */
export interface ResponseEntries {
  readonly memory: Uint8Array;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

/** `views` as `ResponseEntries`: ranges of the memory they share, or of a copy of them all when they do not. */
export function entriesOfViews(views: readonly Uint8Array[]): ResponseEntries {
  const starts = new Int32Array(views.length);
  const ends = new Int32Array(views.length);
  const shared = views[0]?.buffer;
  if (shared !== undefined && views.every((view) => view.buffer === shared)) {
    views.forEach((view, i) => {
      starts[i] = view.byteOffset;
      ends[i] = view.byteOffset + view.length;
    });
    return { memory: new Uint8Array(shared), starts, ends };
  }
  const memory = Buffer.concat(views);
  let at = 0;
  views.forEach((view, i) => {
    starts[i] = at;
    at += view.length;
    ends[i] = at;
  });
  return { memory, starts, ends };
}

/** A response's entries and what each gave: the reference the next response is compared with. */
interface Entries {
  /** The response's memory, as a Buffer (for its compare). */
  readonly buffer: Buffer;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly outcomes: readonly EntryOutcome[];
}

const NO_ENTRIES: Entries = {
  buffer: Buffer.alloc(0),
  starts: new Int32Array(0),
  ends: new Int32Array(0),
  outcomes: [],
};

const bufferOf = (memory: Uint8Array): Buffer => Buffer.from(memory.buffer, memory.byteOffset, memory.byteLength);

/**
 * How far the entries of `current` sit from those of `previous`, when they are laid out alike (as many, each as long,
 * the same distance apart: a re-push whose changed entries kept their lengths); undefined otherwise.
 */
function shiftFrom(previous: Entries, current: ResponseEntries): number | undefined {
  const { starts, ends } = current;
  const count = starts.length;
  if (count !== previous.starts.length || count === 0) return undefined;
  const shift = starts[0]! - previous.starts[0]!;
  for (let i = 0; i < count; i++) {
    if (starts[i]! - previous.starts[i]! !== shift || ends[i]! - previous.ends[i]! !== shift) return undefined;
  }
  return shift;
}

/** Whether the `i`th of `entries` holds `buffer[start, end)`. */
function holds(entries: Entries, i: number, buffer: Buffer, start: number, end: number): boolean {
  const from = entries.starts[i]!;
  const to = entries.ends[i]!;
  return to - from === end - start && entries.buffer.compare(buffer, start, end, from, to) === 0;
}

/**
 * For a response laid out like `previous` (`shift` from its ranges), which entries are the same bytes: the whole run of
 * entries is compared at once, and halved where it differs, so k changed entries of n cost about k log n compares
 * (the bytes between entries, their tags and lengths, are equal in both when the layout is).
 */
function sameEntries(previous: Entries, current: Buffer, shift: number): Uint8Array {
  const { buffer, starts, ends } = previous;
  const same = new Uint8Array(starts.length);
  const compare = (from: number, to: number): void => {
    const start = starts[from]!;
    const end = ends[to - 1]!;
    if (buffer.compare(current, start + shift, end + shift, start, end) === 0) {
      same.fill(1, from, to);
    } else if (to - from > 1) {
      const middle = (from + to) >>> 1;
      compare(from, middle);
      compare(middle, to);
    }
  };
  compare(0, starts.length);
  return same;
}

/**
 * A response is read in three steps: `expect` its entries, then for each entry `find` what its bytes gave before
 * (or decode it) and `keep` what it gave, then `rotate`. The same position is tried first (the cheap case: a server
 * that keeps its order); the first few misses (entries that changed, usually) are looked for by a scan of the previous
 * response; after that, its entries are indexed by a hash of their bytes, once per response.
 */
export class DecodeMemo {
  private previous: Entries = NO_ENTRIES;
  /** The response being read, from `expect`. */
  private current: { readonly buffer: Buffer; readonly starts: Int32Array; readonly ends: Int32Array } | undefined;
  /** Set by `expect` for a response laid out like the previous one: 1 where an entry's bytes are the same. */
  private same: Uint8Array | undefined;
  private outcomes: EntryOutcome[] = [];
  private byHash: Map<number, number | number[]> | undefined;
  private misses = 0;
  /** Entries looked for beyond their position, and how many of them were found. */
  private searches = 0;
  private found = 0;

  /** `scannedMisses`: for tests, which check both ways of finding an entry. */
  constructor(private readonly scannedMisses = SCANNED_MISSES) {}

  /** Whether `expect` found the response laid out like the previous one (for tests). */
  get laidOutAlike(): boolean {
    return this.same !== undefined;
  }

  /**
   * Starts reading a response: when its entries are laid out like the previous response's, finds at once which are
   * unchanged (most of a re-push), by comparing runs of entries rather than each.
   */
  expect(entries: ResponseEntries): void {
    const buffer = bufferOf(entries.memory);
    this.current = { buffer, starts: entries.starts, ends: entries.ends };
    const shift = shiftFrom(this.previous, entries);
    this.same = shift === undefined ? undefined : sameEntries(this.previous, buffer, shift);
  }

  /**
   * What the `index`th entry gave if its bytes were in the previous response; undefined when they were not, and also
   * when looking further than its position is not worth it: in a response laid out like the previous one (`expect`),
   * an entry whose position holds other bytes changed (a search would cost about as much as decoding it again, and
   * find it only where two entries of equal length swapped places); and in a response whose searches keep failing.
   */
  find(index: number): EntryOutcome | undefined {
    const previous = this.previous;
    const same = this.same;
    if (same !== undefined) return same[index] === 1 ? previous.outcomes[index] : undefined;
    const { buffer, starts, ends } = this.current!;
    const start = starts[index]!;
    const end = ends[index]!;
    const count = previous.outcomes.length;
    if (index < count && holds(previous, index, buffer, start, end)) return previous.outcomes[index];
    if (count === 0 || (this.searches >= HOPELESS_SEARCHES && this.found * 8 < this.searches)) return undefined;
    this.searches += 1;
    const i = this.search(buffer, start, end);
    if (i === undefined) return undefined;
    this.found += 1;
    return previous.outcomes[i];
  }

  /** Where the previous response held `buffer[start, end)` (not at the position tried first). */
  private search(buffer: Buffer, start: number, end: number): number | undefined {
    const previous = this.previous;
    const count = previous.outcomes.length;
    if (this.misses < this.scannedMisses) {
      this.misses += 1;
      for (let i = 0; i < count; i++) if (holds(previous, i, buffer, start, end)) return i;
      return undefined;
    }
    const found = this.index().get(hashBytes(buffer, start, end));
    if (found === undefined) return undefined;
    if (typeof found === "number") return holds(previous, found, buffer, start, end) ? found : undefined;
    return found.find((candidate) => holds(previous, candidate, buffer, start, end));
  }

  /** Records what the `index`th entry of the response being read gave. */
  keep(index: number, outcome: EntryOutcome): void {
    this.outcomes[index] = outcome;
  }

  /** Call after each response read: its entries become the reference for the next one. */
  rotate(): void {
    const current = this.current;
    if (current !== undefined) this.previous = { ...current, outcomes: this.outcomes };
    this.byHash = undefined;
    this.discard();
  }

  /** The response could not be read: the previous one stays the reference. */
  discard(): void {
    this.current = undefined;
    this.same = undefined;
    this.outcomes = [];
    this.misses = 0;
    this.searches = 0;
    this.found = 0;
  }

  private index(): Map<number, number | number[]> {
    if (this.byHash) return this.byHash;
    const byHash = new Map<number, number | number[]>();
    const { buffer, starts, ends, outcomes } = this.previous;
    for (let i = 0; i < outcomes.length; i++) {
      const hash = hashBytes(buffer, starts[i]!, ends[i]!);
      const held = byHash.get(hash);
      if (held === undefined) byHash.set(hash, i);
      else if (typeof held === "number") byHash.set(hash, [held, i]);
      else held.push(i);
    }
    this.byHash = byHash;
    return byHash;
  }
}
