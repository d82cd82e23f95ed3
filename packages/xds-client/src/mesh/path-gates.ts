// Many string tests of one call's path in one pass (for the RBAC engine's policies that no index key covers): each
// gate is `exact`, `prefix`, `suffix` or `contains` with a text, on the path or on its lower-cased form. The texts
// of each form go into one Aho-Corasick automaton, so a call reads its path once per form, however many gates there
// are, and learns every gate it passes: a text found ending at position `end` passes a `contains` gate, a `prefix`
// gate when it starts at 0, a `suffix` gate when it ends at the path's end, an `exact` gate when both.
// Each automaton is a table (state x character class), so a character costs two array reads; a set of texts
// whose table would pass MAX_GATE_TABLE entries is not compiled (the caller then runs those tests one by one).
// The result is a scratch array reused by every call: read it before the next `run`. Linear in the path's length
// plus the gates passed, whatever the number of gates.

export interface PathGate {
  readonly kind: "exact" | "prefix" | "suffix" | "contains";
  /** Non-empty; lower-case when `lower`. */
  readonly text: string;
  /** Tested against the lower-cased path. */
  readonly lower: boolean;
}

export interface PathGates {
  /**
   * Finds the gates `path` passes: returns how many, their indexes (in the list compiled) in `hits[0..count)`, in
   * ascending order. `hits` is reused: read it before the next run.
   */
  run(path: string): number;
  readonly hits: Int32Array;
}

interface Node {
  readonly next: Map<number, Node>;
  fail: Node | undefined;
  /** The texts that end here, own and through failure links: [length, gate indexes]. */
  outputs: { readonly length: number; readonly gates: readonly number[] }[];
}

const KIND_PREFIX = 1;
const KIND_SUFFIX = 2;

function newNode(): Node {
  return { next: new Map(), fail: undefined, outputs: [] };
}

/** The automaton of the texts of `gates` (the indexes given), or undefined when there are none. */
function build(gates: readonly PathGate[], indexes: readonly number[]): Node | undefined {
  if (indexes.length === 0) return undefined;
  const root = newNode();
  const byText = new Map<string, number[]>();
  for (const index of indexes) {
    const text = gates[index]!.text;
    const list = byText.get(text);
    if (list === undefined) byText.set(text, [index]);
    else list.push(index);
  }
  for (const [text, list] of byText) {
    let node = root;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      let child = node.next.get(code);
      if (child === undefined) {
        child = newNode();
        node.next.set(code, child);
      }
      node = child;
    }
    node.outputs.push({ length: text.length, gates: list });
  }
  // Failure links, breadth first; each node's outputs gain its failure node's (already complete).
  const queue: Node[] = [];
  for (const child of root.next.values()) {
    child.fail = root;
    queue.push(child);
  }
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const [code, child] of node.next) {
      let fail = node.fail;
      while (fail !== undefined && !fail.next.has(code)) fail = fail.fail;
      child.fail = fail === undefined ? root : fail.next.get(code)!;
      if (child.fail.outputs.length > 0) child.outputs = child.outputs.concat(child.fail.outputs);
      queue.push(child);
    }
  }
  return root;
}

/** The largest transition table compiled (states x character classes); a config past it is not gated. */
export const MAX_GATE_TABLE = 1 << 22;

/** One automaton as a table: a character's class, then the next state per state and class. */
interface Table {
  /** Class of each ASCII code (0: a character no text has). */
  readonly ascii: Uint8Array | Uint16Array;
  /** Class of each other code that some text has. */
  readonly other: ReadonlyMap<number, number>;
  readonly width: number;
  readonly next: Int32Array;
  /** Per state: the texts that end there, as [length, gate indexes]. */
  readonly outputs: readonly (readonly { readonly length: number; readonly gates: readonly number[] }[])[];
}

/** The automaton as a table, or undefined past MAX_GATE_TABLE. */
function tabulate(root: Node): Table | undefined {
  const states: Node[] = [root];
  const ids = new Map<Node, number>([[root, 0]]);
  const codes = new Set<number>();
  for (let head = 0; head < states.length; head++) {
    for (const [code, child] of states[head]!.next) {
      codes.add(code);
      ids.set(child, states.length);
      states.push(child);
    }
  }
  const width = codes.size + 1;
  if (states.length * width > MAX_GATE_TABLE) return undefined;
  const ascii = width < 256 ? new Uint8Array(128) : new Uint16Array(128);
  const other = new Map<number, number>();
  let nextClass = 1;
  const classOf = new Map<number, number>();
  for (const code of codes) {
    const cls = nextClass++;
    classOf.set(code, cls);
    if (code < 128) ascii[code] = cls;
    else other.set(code, cls);
  }
  const next = new Int32Array(states.length * width);
  // Breadth first (states are in that order), so a state's failure state has its row already.
  for (let id = 0; id < states.length; id++) {
    const node = states[id]!;
    const failRow = node.fail === undefined ? -1 : ids.get(node.fail)! * width;
    for (let cls = 0; cls < width; cls++) next[id * width + cls] = failRow < 0 ? 0 : next[failRow + cls]!;
    for (const [code, child] of node.next) next[id * width + classOf.get(code)!] = ids.get(child)!;
  }
  return { ascii, other, width, next, outputs: states.map((node) => node.outputs) };
}

/** The gates compiled, or undefined when their automaton would be past MAX_GATE_TABLE. */
export function compilePathGates(gates: readonly PathGate[]): PathGates | undefined {
  const kinds = gates.map((g) =>
    g.kind === "exact"
      ? KIND_PREFIX | KIND_SUFFIX
      : g.kind === "prefix"
        ? KIND_PREFIX
        : g.kind === "suffix"
          ? KIND_SUFFIX
          : 0,
  );
  const indexes = gates.map((_, i) => i);
  const plainRoot = build(
    gates,
    indexes.filter((i) => !gates[i]!.lower),
  );
  const lowerRoot = build(
    gates,
    indexes.filter((i) => gates[i]!.lower),
  );
  const plain = plainRoot === undefined ? undefined : tabulate(plainRoot);
  const lower = lowerRoot === undefined ? undefined : tabulate(lowerRoot);
  if ((plainRoot !== undefined && plain === undefined) || (lowerRoot !== undefined && lower === undefined)) {
    return undefined;
  }
  const hits = new Int32Array(gates.length);
  /** `seen[gate] === epoch`: already in `hits` this run (no clearing per run). */
  const seen = new Int32Array(gates.length);
  let epoch = 0;
  let count = 0;

  function scan(table: Table, path: string): void {
    const { ascii, other, width, next, outputs } = table;
    let state = 0;
    for (let i = 0; i < path.length; i++) {
      const code = path.charCodeAt(i);
      const cls = code < 128 ? ascii[code]! : (other.get(code) ?? 0);
      state = next[state * width + cls]!;
      const found = outputs[state]!;
      for (let o = 0; o < found.length; o++) {
        const { length, gates: ending } = found[o]!;
        const atStart = i + 1 === length;
        const atEnd = i + 1 === path.length;
        for (let g = 0; g < ending.length; g++) {
          const gate = ending[g]!;
          const kind = kinds[gate]!;
          if ((kind & KIND_PREFIX) !== 0 && !atStart) continue;
          if ((kind & KIND_SUFFIX) !== 0 && !atEnd) continue;
          if (seen[gate] === epoch) continue;
          seen[gate] = epoch;
          hits[count++] = gate;
        }
      }
    }
  }

  return {
    hits,
    run(path) {
      if (epoch === 0x7fffffff) {
        seen.fill(0);
        epoch = 0;
      }
      epoch++;
      count = 0;
      if (plain !== undefined) scan(plain, path);
      if (lower !== undefined) scan(lower, path.toLowerCase());
      // Usually a handful: insertion sort.
      for (let i = 1; i < count; i++) {
        const hit = hits[i]!;
        let j = i - 1;
        while (j >= 0 && hits[j]! > hit) {
          hits[j + 1] = hits[j]!;
          j--;
        }
        hits[j + 1] = hit;
      }
      return count;
    },
  };
}
