import { create, toBinary } from "@bufbuild/protobuf";
import { canonicalize, canonicalText, createVariantIndex, fromProto, TRUE } from "@xdskit/constraint-matcher";
import {
  type Choice,
  contentVersion,
  type Entry,
  type ErrorEntry,
  type ResourceEntry,
  type ServedGroup,
  UNANSWERED,
  type VariantRef,
} from "@xdskit/control-plane/internal";
import {
  type DynamicParameterConstraints,
  ResourceNameSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { StatusSchema } from "@xdskit/protos/google/rpc/status_pb";
import { type Params, paramsKey } from "./params.js";
import type { PassedResource } from "./pass-through-type.js";

/**
 * One (name, parameter map) the relay's downstream clients subscribe to, and so one upstream subscription: what the
 * upstream answered for it (docs/decisions.md#relay-cache).
 */
export interface Answerable {
  readonly params: Params;
  readonly key: string;
  /** What downstream subscriptions with these parameters get: UNANSWERED until the upstream has said. */
  readonly choice: Choice;
  /** The variant it was last answered with: errors that stand in for it name it, so clients holding it get them. */
  readonly lastVariant: VariantRef | undefined;
}

interface Held {
  readonly entry: Entry;
  uses: number;
}

interface Subscription extends Answerable {
  choice: Choice;
  lastVariant: VariantRef | undefined;
  /** What holds it: an upstream subscription of the name, and each upstream wildcard that covers the name. */
  holders: number;
}

/** Whether an upstream wildcard with these parameters (by key) has answered: it then knows every name there is. */
export type WildcardAnswered = (paramsKey: string) => boolean;

/**
 * One name of one type: the answer for each parameter map subscribed to it, which is what each downstream
 * subscription of the name gets (the stream layer asks `choose`). Entries are shared: every parameter map answered
 * with the same variant at the same content holds the same entry object, so the stream layer sees one resource,
 * and a re-answer with identical content changes nothing. Variants keep one `VariantRef` for the group's life (the
 * stream layer tells variants apart by that object).
 */
export class RelayGroup implements ServedGroup {
  readonly typeUrl: string;
  readonly name: string;
  readonly #subscriptions = new Map<string, Subscription>();
  readonly #held = new Map<string, Held>();
  readonly #variants = new Map<string, VariantRef>();
  #overlapping: boolean | undefined;
  readonly #wildcardAnswered: WildcardAnswered;

  constructor(typeUrl: string, name: string, wildcardAnswered: WildcardAnswered = () => false) {
    this.typeUrl = typeUrl;
    this.name = name;
    this.#wildcardAnswered = wildcardAnswered;
  }

  get size(): number {
    return this.#subscriptions.size;
  }

  /** Distinct entries held (cached variants and errors). */
  get entryCount(): number {
    return this.#held.size;
  }

  /**
   * What a downstream subscription with these parameters gets; for a map no upstream subscription holds, nothing
   * when an answered upstream wildcard with those parameters did not name it (it does not exist), else UNANSWERED.
   */
  choose(params: Params | undefined): Choice {
    const key = paramsKey(params);
    const sub = this.#subscriptions.get(key);
    if (sub !== undefined) return sub.choice;
    return this.#wildcardAnswered(key) ? undefined : UNANSWERED;
  }

  /** Whether two parameter maps are answered with different variants: a response then carries both (served.ts). */
  get overlapping(): boolean {
    if (this.#overlapping === undefined) {
      let first: VariantRef | undefined | null = null;
      this.#overlapping = false;
      for (const sub of this.#subscriptions.values()) {
        const choice = sub.choice;
        if (choice === UNANSWERED || choice === undefined) continue;
        if (first === null) first = choice.variant;
        else if (first !== choice.variant) {
          this.#overlapping = true;
          break;
        }
      }
    }
    return this.#overlapping;
  }

  get(key: string): Answerable | undefined {
    return this.#subscriptions.get(key);
  }

  /** One more holder of a parameter map (new ones are not answered yet). */
  add(params: Params): Answerable {
    const key = paramsKey(params);
    const existing = this.#subscriptions.get(key);
    if (existing) {
      existing.holders++;
      return existing;
    }
    const sub: Subscription = { params, key, choice: UNANSWERED, lastVariant: undefined, holders: 1 };
    this.#subscriptions.set(key, sub);
    return sub;
  }

  /** One holder fewer: with the last, nobody subscribes with these parameters any more. */
  remove(key: string): void {
    const sub = this.#subscriptions.get(key);
    if (!sub || --sub.holders > 0) return;
    this.#release(sub.choice);
    this.#subscriptions.delete(key);
    this.#overlapping = undefined;
  }

  /** Answers a parameter map; returns whether what its subscriptions get changed. */
  answer(answerable: Answerable, choice: Choice): boolean {
    const sub = this.#subscriptions.get(answerable.key);
    if (sub !== answerable || sub.choice === choice) {
      this.#dropUnused(choice);
      return false;
    }
    if (choice !== UNANSWERED && choice?.kind === "resource") sub.lastVariant = choice.variant;
    this.#hold(choice);
    this.#release(sub.choice);
    sub.choice = choice;
    this.#overlapping = undefined;
    return true;
  }

  /**
   * The entry of a relayed resource: its variant as the upstream named it, versioned by content; `do_not_cache` as
   * the upstream marked it (only per-node tables hold such, docs/decisions.md#relay-per-node-resources, and a relay
   * below this one must see it too); wrapped when its message cannot name it.
   */
  resourceEntry(passed: PassedResource): ResourceEntry {
    const variant = this.variantOf(passed.resourceName?.dynamicParameterConstraints);
    const version = contentVersion(passed.any, passed.doNotCache);
    const key = `r${variant?.text ?? ""}\u0000${version}`;
    const held = this.#held.get(key);
    if (held) return held.entry as ResourceEntry;
    return this.#intern(key, {
      kind: "resource",
      typeUrl: this.typeUrl,
      name: this.name,
      version,
      variant,
      allowOverlap: true,
      schema: undefined,
      any: passed.any,
      wrap: passed.nameless ? true : undefined,
      doNotCache: passed.doNotCache,
    });
  }

  /** A TP3 error standing in for `variant` (none: the unconstrained one). */
  errorEntry(code: number, message: string, variant: VariantRef | undefined): ErrorEntry {
    const key = `e${variant?.text ?? ""}\u0000${code}\u0000${message}`;
    const held = this.#held.get(key);
    if (held) return held.entry as ErrorEntry;
    const status = create(StatusSchema, { code, message });
    // Equal errors share a version, as equal resources do (what a client holds is compared by it).
    const packed = {
      $typeName: "google.protobuf.Any" as const,
      typeUrl: StatusSchema.typeName,
      value: toBinary(StatusSchema, status),
    };
    return this.#intern(key, {
      kind: "error",
      typeUrl: this.typeUrl,
      name: this.name,
      version: contentVersion(packed),
      variant,
      allowOverlap: true,
      status,
    });
  }

  /**
   * The variant a constraints message names, kept as the upstream wrote it (`resource_name` passes through
   * unchanged) and known by its canonical text; undefined for none (or constraints that are always true).
   */
  variantOf(constraints: DynamicParameterConstraints | undefined): VariantRef | undefined {
    if (constraints === undefined) return undefined;
    const expr = canonicalize(fromProto(constraints));
    if (expr.kind === TRUE.kind) return undefined;
    const text = canonicalText(expr);
    let variant = this.#variants.get(text);
    if (!variant) {
      variant = Object.freeze({
        name: this.name,
        text,
        constraints: expr,
        resourceName: create(ResourceNameSchema, { name: this.name, dynamicParameterConstraints: constraints }),
      });
      this.#variants.set(text, variant);
    }
    return variant;
  }

  /**
   * TP2's fallback (docs/decisions.md#relay-outage): the most specific cached resource whose constraints `params`
   * match, among what other parameter maps of the name were answered with; undefined when none matches.
   */
  fallbackFor(params: Params): ResourceEntry | undefined {
    const index = createVariantIndex<ResourceEntry>();
    for (const { entry } of this.#held.values()) {
      if (entry.kind !== "resource") continue;
      const constraints = entry.variant?.constraints ?? TRUE;
      if (!index.get(constraints)) index.add(constraints, entry);
    }
    return index.select(params)?.variant.value;
  }

  #intern<E extends Entry>(key: string, entry: E): E {
    Object.freeze(entry);
    this.#held.set(key, { entry, uses: 0 });
    return entry;
  }

  #hold(choice: Choice): void {
    if (choice === UNANSWERED || choice === undefined) return;
    const held = this.#held.get(heldKey(choice));
    if (held) held.uses++;
  }

  /** An entry made for an answer that did not take: forgotten unless something holds it. */
  #dropUnused(choice: Choice): void {
    if (choice === UNANSWERED || choice === undefined) return;
    const key = heldKey(choice);
    if (this.#held.get(key)?.uses === 0) this.#held.delete(key);
  }

  #release(choice: Choice): void {
    if (choice === UNANSWERED || choice === undefined) return;
    const key = heldKey(choice);
    const held = this.#held.get(key);
    if (held && --held.uses <= 0) this.#held.delete(key);
  }
}

function heldKey(entry: Entry): string {
  const text = entry.variant?.text ?? "";
  return entry.kind === "resource"
    ? `r${text}\u0000${entry.version}`
    : `e${text}\u0000${entry.status.code}\u0000${entry.status.message}`;
}
