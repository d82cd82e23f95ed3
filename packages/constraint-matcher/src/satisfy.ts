import { type Expr, type IntRange, MAX_UINT64 } from "./expr.js";
import { inRanges } from "./params.js";

// Satisfiability over a finite domain per key. For key k, every possible value (absent included) gives every
// literal on k the same truth value as one of these representatives:
//   absent; each constant mentioned in a `k=...` literal; one string that is neither a constant nor an integer;
//   and, when k has ranges, one non-constant integer from each interval between consecutive range boundaries
//   (where no range starts or ends inside, every range literal is constant).
// So an expression is satisfiable iff some assignment over these domains satisfies it: the search is exact.

const UNKNOWN = 2;
type Truth = 0 | 1 | typeof UNKNOWN;

interface KeyFacts {
  readonly values: Set<string>;
  readonly ranges: IntRange[];
  uses: number;
}

/** A parameter map satisfying `expr`, or undefined when none exists. Keys it leaves out are absent. */
export function findWitness(expr: Expr): Record<string, string> | undefined {
  const facts = collectFacts(expr);
  // Most-used keys first: their assignments decide the most literals, so dead branches are cut early.
  const keys = [...facts.keys()].sort((a, b) => facts.get(b)!.uses - facts.get(a)!.uses);
  const domains = keys.map((k) => domainOf(facts.get(k)!));
  const assignment = new Map<string, string | undefined>();
  const search = (i: number): boolean => {
    const t = evaluate3(expr, assignment);
    if (t !== UNKNOWN) return t === 1;
    const key = keys[i]!;
    for (const v of domains[i]!) {
      assignment.set(key, v);
      if (search(i + 1)) return true;
    }
    assignment.delete(key);
    return false;
  };
  if (!search(0)) return undefined;
  const witness: Record<string, string> = {};
  for (const [k, v] of assignment) if (v !== undefined) witness[k] = v;
  return witness;
}

/** Whether some parameter map satisfies `expr`. */
export function isSatisfiable(expr: Expr): boolean {
  return findWitness(expr) !== undefined;
}

function collectFacts(expr: Expr): Map<string, KeyFacts> {
  const facts = new Map<string, KeyFacts>();
  const factsOf = (key: string): KeyFacts => {
    let f = facts.get(key);
    if (f === undefined) {
      f = { values: new Set(), ranges: [], uses: 0 };
      facts.set(key, f);
    }
    f.uses++;
    return f;
  };
  const walk = (e: Expr): void => {
    switch (e.kind) {
      case "true":
        return;
      case "value":
        factsOf(e.key).values.add(e.value);
        return;
      case "exists":
        factsOf(e.key);
        return;
      case "range":
        factsOf(e.key).ranges.push(...e.ranges);
        return;
      case "not":
        walk(e.child);
        return;
      case "and":
      case "or":
        for (const c of e.children) walk(c);
    }
  };
  walk(expr);
  return facts;
}

function domainOf(f: KeyFacts): (string | undefined)[] {
  const domain: (string | undefined)[] = [undefined, ...f.values];
  let other = "~";
  while (f.values.has(other)) other += "~";
  domain.push(other);
  if (f.ranges.length === 0) return domain;
  const bounds = new Set<bigint>([0n]);
  for (const r of f.ranges) {
    bounds.add(r.min);
    if (r.max < MAX_UINT64) bounds.add(r.max + 1n);
  }
  const sorted = [...bounds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  sorted.forEach((start, i) => {
    const end = i + 1 < sorted.length ? sorted[i + 1]! - 1n : MAX_UINT64;
    // At most |values| integers of the interval are constants, so this loop ends quickly.
    for (let n = start; n <= end; n++) {
      if (!f.values.has(n.toString())) {
        domain.push(n.toString());
        return;
      }
    }
  });
  return domain;
}

/** Kleene three-valued evaluation: keys missing from `assignment` are unknown. */
function evaluate3(e: Expr, assignment: ReadonlyMap<string, string | undefined>): Truth {
  switch (e.kind) {
    case "true":
      return 1;
    case "value":
    case "exists":
    case "range": {
      if (!assignment.has(e.key)) return UNKNOWN;
      const v = assignment.get(e.key);
      if (v === undefined) return 0;
      if (e.kind === "value") return v === e.value ? 1 : 0;
      if (e.kind === "exists") return 1;
      return inRanges(v, e.ranges) ? 1 : 0;
    }
    case "not": {
      const t = evaluate3(e.child, assignment);
      return t === UNKNOWN ? UNKNOWN : t === 1 ? 0 : 1;
    }
    case "and": {
      let result: Truth = 1;
      for (const c of e.children) {
        const t = evaluate3(c, assignment);
        if (t === 0) return 0;
        if (t === UNKNOWN) result = UNKNOWN;
      }
      return result;
    }
    case "or": {
      let result: Truth = 0;
      for (const c of e.children) {
        const t = evaluate3(c, assignment);
        if (t === 1) return 1;
        if (t === UNKNOWN) result = UNKNOWN;
      }
      return result;
    }
  }
}
