// TP2 variant choice against a model (docs/decisions.md#variant-selection): every subscription holds the most
// specific variant the client knows for the name that its parameters match, ties to the smallest canonical text.
// Known: in delta, the variants the subscriptions hold, minus what a response removes, plus what it carries (a delta
// response carries what changed); in state of the world, what the response carries for the name (LDS: every name,
// so a held variant left out is gone and a cached subscription matching nothing is deleted; EDS: each name it
// carries, in full, and a subscription matching none of them keeps what it has).
//
// Steps, per case: (1) subscriptions of listener/endpoints "N" with random parameter maps; (2) random variants of N
// (conjunctions of `k=v` and `exists(k)` over three keys, the unconstrained one included); (3) a sequence of
// responses: delta ones update some variants (new content, or the same bytes again) and remove others, SotW ones
// carry a subset; (4) after each response is ACKed, each watcher's new events equal the model's: the resource when
// what the subscription holds changed, NOT_FOUND (ambient when cached) when its variant was removed and no other
// known variant matches, `cleared` when identical bytes end that ambient error, nothing otherwise.
import { create } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { and, canonicalText, type Expr, exists, specificity, TRUE, toProto, value } from "@xdskit/constraint-matcher";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { expect, it } from "vitest";
import { setup } from "./support/harness.js";
import { flush, type RecordingWatcher, recordingWatcher, type WatchEvent } from "./support/recorder.js";
import {
  endpointsAny,
  listenerAny,
  type TestEndpoints,
  type TestListener,
  testEndpointsType,
  testListenerType,
} from "./support/test-types.js";

type Mode = "delta" | "sotw-lds" | "sotw-eds";
type Term = { readonly key: string; readonly value?: string };
type Params = Readonly<Record<string, string>>;

const KEYS = ["a", "b", "c"] as const;

interface Variant {
  readonly terms: readonly Term[];
  readonly expr: Expr;
  readonly key: string;
}

function variantOf(terms: readonly Term[]): Variant {
  const expr =
    terms.length === 0 ? TRUE : and(terms.map((t) => (t.value === undefined ? exists(t.key) : value(t.key, t.value))));
  return { terms, expr, key: terms.length === 0 ? "" : canonicalText(expr) };
}

/** The model's own reading of a variant: each term holds, and a rank by positive keys, then canonical text. */
const modelMatches = (v: Variant, p: Params) =>
  v.terms.every((t) => (t.value === undefined ? p[t.key] !== undefined : p[t.key] === t.value));
const TRUE_TEXT = canonicalText(TRUE);
function better(a: Variant, b: Variant): boolean {
  const at = a.key === "" ? TRUE_TEXT : a.key;
  const bt = b.key === "" ? TRUE_TEXT : b.key;
  return a.terms.length !== b.terms.length ? a.terms.length > b.terms.length : at < bt;
}

/** Each key at most once: `k=1` or `exists(k)` (one value, so that `exists` and `=` overlap often). */
const termsArb: fc.Arbitrary<Term[]> = fc
  .subarray([...KEYS], { maxLength: 3 })
  .chain((keys) => fc.tuple(...keys.map((key) => fc.constantFrom<Term>({ key, value: "1" }, { key }))));

const paramsArb: fc.Arbitrary<Params> = fc
  .tuple(...KEYS.map((k) => fc.option(fc.constantFrom("1", "2"), { nil: undefined }).map((v) => [k, v] as const)))
  .map((pairs) => {
    const params: Record<string, string> = {};
    for (const [k, v] of pairs) if (v !== undefined) params[k] = v;
    return params;
  });

type Fate = "keep" | "same" | "change" | "remove";

interface Step {
  /** Variant index → whether its content changes (false: the same bytes again). */
  readonly carried: ReadonlyMap<number, boolean>;
  /** Delta: removed variant indices (disjoint from `carried`). */
  readonly removed: readonly number[];
}

const caseArb = fc
  .record({
    mode: fc.constantFrom<Mode>("delta", "sotw-lds", "sotw-eds"),
    variants: fc.uniqueArray(termsArb.map(variantOf), { minLength: 1, maxLength: 5, selector: (v) => v.key }),
    subscriptions: fc.uniqueArray(paramsArb, {
      minLength: 1,
      maxLength: 4,
      selector: (p) => JSON.stringify(Object.entries(p)),
    }),
  })
  .chain((c) =>
    fc
      .array(
        fc.record({
          // A third of the steps only remove (delta), so that removals meet subscriptions holding other variants.
          fate: fc
            .integer({ min: 0, max: 2 })
            .chain((kind) =>
              fc.array(
                kind === 0
                  ? fc.constantFrom<Fate>("keep", "remove")
                  : fc.constantFrom<Fate>("keep", "same", "change", "remove"),
                { minLength: c.variants.length, maxLength: c.variants.length },
              ),
            ),
        }),
        { minLength: 1, maxLength: 6 },
      )
      .map((raw) => {
        const steps: Step[] = raw.map(({ fate }) => ({
          carried: new Map(
            fate.flatMap((f, i) => (f === "same" || f === "change" ? [[i, f === "change"] as const] : [])),
          ),
          removed: c.mode === "delta" ? fate.flatMap((f, i) => (f === "remove" ? [i] : [])) : [],
        }));
        // SotW EDS: a response always carries the name (an empty one carries nothing to choose among).
        return { ...c, steps: c.mode === "sotw-eds" ? steps.filter((s) => s.carried.size > 0) : steps };
      }),
  );

/** What the model believes of one subscription. */
interface ModelSub {
  readonly params: Params;
  /** What its watcher has: variant index and content. */
  cached: { variant: number; content: number } | undefined;
  /** The variant the server's latest word gave it (a standing one: not removed since). */
  held: number | undefined;
  /** Some variant was ever given to it (the client then finds it by that variant, not by its parameters). */
  variantEver: number | undefined;
  deleted: boolean;
  ambient: boolean;
}

function runModel(c: { mode: Mode; variants: Variant[]; subscriptions: Params[]; steps: Step[] }): string[][][] {
  const subs: ModelSub[] = c.subscriptions.map((params) => ({
    params,
    cached: undefined,
    held: undefined,
    variantEver: undefined,
    deleted: false,
    ambient: false,
  }));
  const contentOf = new Map<number, number>();
  let nextContent = 1;
  const out: string[][][] = [];
  for (const step of c.steps) {
    const events: string[][] = subs.map(() => []);
    const carried = new Map<number, number>();
    for (const [i, change] of step.carried) {
      if (change || !contentOf.has(i)) contentOf.set(i, nextContent++);
      carried.set(i, contentOf.get(i)!);
    }
    const give = (s: number, variant: number, content: number) => {
      const sub = subs[s]!;
      sub.held = variant;
      sub.variantEver = variant;
      sub.deleted = false;
      if (sub.cached?.variant === variant && sub.cached.content === content) {
        if (sub.ambient) events[s]!.push("cleared");
      } else {
        sub.cached = { variant, content };
        events[s]!.push(`resource:${content}`);
      }
      sub.ambient = false;
    };
    const best = (candidates: Map<number, number>, sub: ModelSub, own: number | undefined) => {
      let chosen: number | undefined;
      for (const i of candidates.keys()) {
        if (i !== own && !modelMatches(c.variants[i]!, sub.params)) continue;
        if (chosen === undefined || better(c.variants[i]!, c.variants[chosen]!)) chosen = i;
      }
      return chosen;
    };
    const removed = new Set(step.removed);
    const known = new Map<number, number>();
    if (c.mode === "delta") {
      for (const sub of subs)
        if (sub.held !== undefined && !removed.has(sub.held)) known.set(sub.held, sub.cached!.content);
    }
    for (const [i, content] of carried) known.set(i, content);
    subs.forEach((sub, s) => {
      const own = c.mode === "delta" && sub.held !== undefined && !removed.has(sub.held) ? sub.held : undefined;
      const chosen = best(known, sub, own);
      if (chosen === undefined) {
        // SotW LDS: a cached subscription the response gave nothing is deleted.
        if (c.mode === "sotw-lds" && sub.cached !== undefined && !sub.deleted) {
          sub.deleted = true;
          sub.held = undefined;
          sub.ambient = true;
          events[s]!.push("ambient:NOT_FOUND");
        }
        return;
      }
      if (chosen === own && known.get(chosen) === sub.cached?.content) return;
      give(s, chosen, known.get(chosen)!);
    });
    for (const r of step.removed) {
      subs.forEach((sub, s) => {
        const holds = sub.variantEver !== undefined ? sub.variantEver === r : modelMatches(c.variants[r]!, sub.params);
        if (!holds) return;
        if (sub.held === r) {
          // Another subscription's standing variant (not removed) may stand in.
          const alternatives = new Map<number, number>();
          for (const other of subs) {
            if (other.held !== undefined && !removed.has(other.held))
              alternatives.set(other.held, other.cached!.content);
          }
          const chosen = best(alternatives, sub, undefined);
          if (chosen !== undefined) {
            give(s, chosen, alternatives.get(chosen)!);
            return;
          }
        }
        if (sub.deleted) return;
        sub.deleted = true;
        sub.held = undefined;
        if (sub.cached) {
          sub.ambient = true;
          events[s]!.push("ambient:NOT_FOUND");
        } else events[s]!.push("error:NOT_FOUND");
      });
    }
    out.push(events);
  }
  return out;
}

function wrap(mode: Mode, v: Variant, content: number): Any {
  const inner = mode === "sotw-eds" ? endpointsAny("N", content) : listenerAny("N", `c${content}`);
  const constraints = toProto(v.expr);
  return anyPack(
    ResourceSchema,
    create(ResourceSchema, {
      resourceName: { name: "N", ...(constraints ? { dynamicParameterConstraints: constraints } : {}) },
      resource: inner,
    }),
  );
}

function seen(events: WatchEvent<TestListener | TestEndpoints>[]): string[] {
  return events.map((e) => {
    if (e.kind === "resource") {
      const r = e.resource;
      return `resource:${"localities" in r ? r.localities : Number(r.statPrefix.slice(1))}`;
    }
    if (e.kind === "cleared") return "cleared";
    return `${e.kind}:${e.error.message.slice(1, e.error.message.indexOf("]"))}`;
  });
}

it("every subscription holds the most specific known variant its parameters match, in delta and SotW", async () => {
  await fc.assert(
    fc.asyncProperty(caseArb, async (c) => {
      const expected = runModel(c);
      const t = setup({ protocol: c.mode === "delta" ? "delta" : "sotw", bootstrap: {} });
      const type = c.mode === "sotw-eds" ? testEndpointsType : testListenerType;
      const watchers: RecordingWatcher<TestListener | TestEndpoints>[] = c.subscriptions.map((params) => {
        const w = recordingWatcher<TestListener | TestEndpoints>();
        t.client.watch(type as typeof testListenerType, "N", w as RecordingWatcher<TestListener>, {
          dynamicParameters: params,
        });
        return w;
      });
      const stream = await t.server.nextStream();
      await stream.nextRequest();
      const contentOf = new Map<number, number>();
      let nextContent = 1;
      for (const [n, step] of c.steps.entries()) {
        const resources: Any[] = [];
        for (const [i, change] of step.carried) {
          if (change || !contentOf.has(i)) contentOf.set(i, nextContent++);
          resources.push(wrap(c.mode, c.variants[i]!, contentOf.get(i)!));
        }
        const removed = step.removed.map((i) => c.variants[i]!);
        const answer = await stream.exchange({
          typeUrl: type.typeUrl,
          versionInfo: String(n + 1),
          nonce: `n${n}`,
          resources,
          removed: removed.filter((v) => v.key === "").map(() => "N"),
          removedNames: removed
            .filter((v) => v.key !== "")
            .map((v) => ({ name: "N", dynamicParameterConstraints: toProto(v.expr)! })),
        });
        expect(answer.nack).toBe(false);
        await flush();
        expect(watchers.map((w) => seen(w.take()))).toEqual(expected[n]);
      }
      await t.client.close();
    }),
    { numRuns: 200 },
  );
}, 60_000);

it("the model ranks as the matcher does", () => {
  fc.assert(
    fc.property(termsArb.map(variantOf), (v) => {
      expect(specificity(v.expr)).toBe(v.terms.length);
    }),
  );
});
