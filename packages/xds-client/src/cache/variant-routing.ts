// Which subscriptions of a name a response's resources and removals reach, TP2 variants included
// (docs/decisions.md#variant-selection): each subscription holds the most specific variant the client knows for the
// name that its parameters match. Known: the variants the response carries, and, in delta (where a response carries
// only what changed), the variants the name's subscriptions hold and the response did not take back. Part of the
// cache (resource-cache.ts); runs in its mutation path, inside a callback group. The constraint matcher and the
// update rules come from the protocol module, loaded before any response.
import type { Expr, Ranked } from "@xdskit/constraint-matcher";
import type { UpdateContext } from "../protocol/cache-updates.js";
import { protocolNow } from "../protocol/protocol-loader.js";
import type { CachedResource, HeldVariant, ResourceState } from "../state/resource-state.js";
import type { DecodedResource, DecodedResponse, VariantRef } from "../wire/decoded-response.js";
import type { SeenMarks } from "./seen-marks.js";
import { onlyState } from "./subscriptions.js";

/** The subscriptions of one name, by their parameters (the cache's own map: read, never kept). */
export type Subscriptions = ReadonlyMap<string, ResourceState>;

export interface VariantRoutingOptions {
  /** A re-pushed resource an entry holds ACKed and clean only moves its version (cache-updates.ts). */
  readonly reapplyIdentical: boolean;
  /** The subscriptions of `name` among the authorities a server serves, if any. */
  readonly subscriptionsOf: (served: ReadonlySet<string>, typeUrl: string, name: string) => Subscriptions | undefined;
  /**
   * `subscriptionsOf` for the resources of one response, by their index: what it looks up for every name is looked
   * up once, and a resource named as the one at its index in the type's last response is not looked up again.
   */
  readonly lookup: (
    served: ReadonlySet<string>,
    typeUrl: string,
    resources: readonly DecodedResource[],
  ) => (index: number) => Subscriptions | undefined;
  /** Several known variants matched one subscription, and the most specific was chosen (logged and counted). */
  readonly ambiguous: (context: UpdateContext, state: ResourceState, matching: number, chosen: string) => void;
}

export interface VariantRouting {
  /** Applies the response's resources; `seen` (SotW LDS/CDS) collects the subscriptions given something. */
  applyResources(
    context: UpdateContext,
    served: ReadonlySet<string>,
    response: DecodedResponse,
    seen: SeenMarks | undefined,
  ): void;
  /**
   * Delta removals: a subscription holding a removed variant moves to the most specific other known variant its
   * parameters match, else the resource is deleted for it; a subscription holding nothing yet whose parameters
   * match the removed variant learns the resource does not exist.
   */
  applyRemovals(context: UpdateContext, served: ReadonlySet<string>, response: DecodedResponse): void;
  /** The subscriptions a TP3 error is for: those holding its variant, or holding none and matching it. */
  holders(states: Iterable<ResourceState>, ref: VariantRef): ResourceState[];
  /** Records the constraints of a variant an entry is about to hold (for the choices of later responses). */
  remember(ref: VariantRef): void;
}

/** A known variant: its constraints and rank, and where its content is. */
interface Candidate {
  readonly key: string;
  readonly constraints: Expr;
  readonly rank: Ranked;
  /** Carried by the response. */
  readonly resource?: DecodedResource;
  /** Held by a subscription as an accepted resource, which another subscription may be given too. */
  readonly cached?: CachedResource;
}

/** The constraints and rank of each variant entries hold, by its object (set when an entry is given it). */
const known = new WeakMap<HeldVariant, { readonly constraints: Expr; readonly rank: Ranked }>();

export function createVariantRouting(options: VariantRoutingOptions): VariantRouting {
  function rankOf(ref: VariantRef): { readonly constraints: Expr; readonly rank: Ranked } {
    let info = known.get(ref.variant);
    if (info === undefined) {
      const { canonicalText, specificity, TRUE } = protocolNow();
      // An unconstrained resource ranks by the canonical text of TRUE, as the matcher and servers rank it.
      const text = ref.constraints.kind === "true" ? canonicalText(TRUE) : ref.variant.key;
      info = { constraints: ref.constraints, rank: { specificity: specificity(ref.constraints), canonicalText: text } };
      known.set(ref.variant, info);
    }
    return info;
  }

  /** The variant an entry holds as the server's standing word (a resource, accepted or not, or a TP3 error). */
  function heldVariant(state: ResourceState): HeldVariant | undefined {
    const standing = state.state === "acked" || state.state === "nacked" || state.state === "received_error";
    return standing ? state.variant : undefined;
  }

  /** The variants the entries of a name hold and the response did not remove or replace (delta only). */
  function heldCandidates(states: Subscriptions, exclude: ReadonlySet<string>): Candidate[] {
    const out: Candidate[] = [];
    for (const state of states.values()) {
      const held = heldVariant(state);
      if (held === undefined || exclude.has(held.key)) continue;
      const info =
        held.key === ""
          ? rankOf({ name: state.name, constraints: protocolNow().TRUE, variant: held })
          : known.get(held);
      if (info === undefined) continue;
      const cached = state.state === "acked" ? state.resource : undefined;
      const index = out.findIndex((c) => c.key === held.key);
      const candidate = { key: held.key, ...info, ...(cached ? { cached } : {}) };
      if (index < 0) out.push(candidate);
      else if (cached && !out[index]!.cached) out[index] = candidate;
    }
    return out;
  }

  /**
   * Gives `state` the most specific candidate its parameters match, unless it already holds it. Its own held variant
   * is a candidate even when held as an error or a rejected update; another entry's only as an accepted resource.
   */
  function choose(
    context: UpdateContext,
    state: ResourceState,
    candidates: readonly Candidate[],
    own: string | undefined,
    version: string,
    seen: SeenMarks | undefined,
  ): void {
    const { applyResource, comparePreference, matches } = protocolNow();
    let best: Candidate | undefined;
    let matching = 0;
    let offered = false;
    for (const c of candidates) {
      if (c.key !== own) {
        if (c.resource === undefined && c.cached === undefined) continue;
        if (c.constraints.kind !== "true" && !matches(c.constraints, state.parameters)) continue;
      }
      matching += 1;
      if (c.resource) offered = true;
      if (!best || comparePreference(c.rank, best.rank) < 0) best = c;
    }
    if (!best) return;
    if (matching > 1 && offered) options.ambiguous(context, state, matching, best.rank.canonicalText);
    if (best.resource) {
      seen?.add(state);
      applyResource(context, state, best.resource, best.resource.version ?? version);
    } else if (best.key !== own && best.cached) {
      const { value, bytes, variant } = best.cached;
      const copy: DecodedResource = {
        name: state.name,
        constraints: best.constraints,
        variant,
        ok: true,
        value,
        detail: undefined,
        bytes,
        version: undefined,
      };
      applyResource(context, state, copy, best.cached.version);
    }
  }

  function holders(states: Iterable<ResourceState>, ref: VariantRef): ResourceState[] {
    const { matches } = protocolNow();
    const out: ResourceState[] = [];
    for (const state of states) {
      const holds =
        state.variant !== undefined
          ? state.variant.key === ref.variant.key
          : ref.constraints.kind === "true" || matches(ref.constraints, state.parameters);
      if (holds) out.push(state);
    }
    return out;
  }

  /** The keys a delta response removes, by name. */
  function removedByName(response: DecodedResponse): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const removal of response.removals) {
      const keys = out.get(removal.name);
      if (keys) keys.add(removal.variant.key);
      else out.set(removal.name, new Set([removal.variant.key]));
    }
    return out;
  }

  const none: ReadonlySet<string> = new Set();

  return {
    holders,
    remember: rankOf,
    applyResources(context, served, response, seen) {
      const { typeUrl, version } = response;
      const { applyResource, reapplyIdentical } = protocolNow();
      const delta = !response.stateOfTheWorld;
      const reapply = options.reapplyIdentical;
      /** The names whose subscriptions need the choice, with the response's variants of each. */
      let chosen: Map<string, DecodedResource[]> | undefined;
      const choiceFor = (d: DecodedResource) => {
        chosen ??= new Map();
        const list = chosen.get(d.name);
        if (list) list.push(d);
        else chosen.set(d.name, [d]);
      };
      const constrained = response.resources.some((d) => d.constraints.kind !== "true");
      const { resources } = response;
      const subscriptionsOf = options.lookup(served, typeUrl, resources);
      for (let i = 0; i < resources.length; i++) {
        const d = resources[i]!;
        const states = subscriptionsOf(i);
        if (states === undefined) continue;
        // The common case walks the cache's maps directly: a response of 10,000 unconstrained resources for
        // subscriptions holding no variant makes no array per name. Applying queues the watchers' callbacks, so
        // nothing subscribes or unsubscribes meanwhile.
        if (constrained || (delta && holdsVariant(states))) {
          choiceFor(d);
          continue;
        }
        const only = onlyState(states);
        if (only !== undefined) {
          seen?.add(only);
          // A re-pushed resource the entry already holds, ACKed and clean: its version moves, nothing else.
          if (!(reapply && reapplyIdentical(only, d, d.version ?? version))) {
            applyResource(context, only, d, d.version ?? version);
          }
          continue;
        }
        for (const state of states.values()) {
          seen?.add(state);
          applyResource(context, state, d, d.version ?? version);
        }
      }
      if (chosen === undefined) return;
      const removed = delta && response.removals.length > 0 ? removedByName(response) : undefined;
      for (const [name, offered] of chosen) {
        const states = options.subscriptionsOf(served, typeUrl, name)!;
        const exclude = new Set(removed?.get(name) ?? none);
        const candidates: Candidate[] = offered.map((d) => ({ key: d.variant.key, ...rankOf(d), resource: d }));
        // A SotW response lists every variant of each name it carries (of every name, for LDS and CDS): the held
        // ones it leaves out are gone. A delta response carries what changed: the held ones stand.
        if (delta) {
          for (const c of candidates) exclude.add(c.key);
          candidates.push(...heldCandidates(states, exclude));
        }
        for (const state of states.values()) {
          const own = delta ? heldVariant(state)?.key : undefined;
          choose(
            context,
            state,
            candidates,
            own !== undefined && removed?.get(name)?.has(own) ? undefined : own,
            version,
            seen,
          );
        }
      }
    },
    applyRemovals(context, served, response) {
      const { applyDeletion } = protocolNow();
      const { typeUrl, version } = response;
      const removed = removedByName(response);
      for (const removal of response.removals) {
        const states = options.subscriptionsOf(served, typeUrl, removal.name);
        if (states === undefined) continue;
        let alternatives: Candidate[] | undefined;
        for (const state of holders(states.values(), removal)) {
          if (state.variant?.key === removal.variant.key && heldVariant(state) !== undefined) {
            alternatives ??= heldCandidates(states, removed.get(removal.name) ?? none);
            const before = state.variant;
            choose(context, state, alternatives, undefined, version, undefined);
            if (state.variant !== before) continue;
          }
          applyDeletion(context, state, version);
        }
      }
    },
  };
}

/** Some subscription of the name holds a constrained variant (which an unconstrained one must not overwrite blindly). */
function holdsVariant(states: Subscriptions): boolean {
  // A name's only subscription is read without an iterator (a delta response asks this of every resource).
  const only = onlyState(states);
  if (only !== undefined) return only.variant !== undefined && only.variant.key !== "";
  for (const state of states.values()) if (state.variant !== undefined && state.variant.key !== "") return true;
  return false;
}
