import { fromBinary, type Registry } from "@bufbuild/protobuf";
import { type Expr, TRUE } from "@xdskit/constraint-matcher";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import { type StatusInit, toStatus } from "../status.js";
import { type ChangedVariants, WHOLE_NAME } from "../subscriptions/change-scope.js";
import { ChangeLog } from "./change-log.js";
import { contentVersion } from "./content-version.js";
import type { Entry, ErrorEntry, ResourceEntry } from "./entry.js";
import {
  type PreparedResource,
  prepareResource,
  prepareResources,
  type ResourceInput,
  type ResourceMessage,
  type ResourceOptions,
} from "./resource-input.js";
import {
  type ConstraintsInput,
  readConstraints,
  type VariantCandidate,
  VariantGroup,
  variantRef,
} from "./variant-group.js";

/** Options of `setResourceError`. */
export interface ResourceErrorOptions {
  /** The variant the error stands in for (without: the unconstrained one). */
  readonly constraints?: ConstraintsInput;
  /** As for resources: this variant may overlap the other variants of its name. */
  readonly allowOverlap?: boolean;
}

/**
 * One set of resources: the server's default set, or the set served to the nodes a selector picks. Every change is
 * pushed to the streams using this set that subscribe to it. Changes made in one synchronous run are pushed together.
 * A name may hold several variants (TP2), each identified by its constraints; calls without constraints address the
 * unconstrained variant, except `removeResource`, which removes the whole name.
 */
export interface ResourceSet {
  /**
   * Adds or replaces one resource (one variant of its name with `options.constraints`). Returns its version. Clears
   * a resource error set for the same variant. Throws OverlappingVariantsError, changing nothing, for a variant that
   * overlaps another of its name.
   */
  setResource(resource: ResourceMessage, options?: ResourceOptions): string;
  /** Adds or replaces several resources at once (other resources are kept); all or nothing. */
  setResources(resources: Iterable<ResourceMessage | ResourceInput>): void;
  /**
   * Removes a resource: every variant of the name and its errors, or with `constraints` that variant only (or its
   * error). Returns false if there was nothing to remove.
   */
  removeResource(typeUrl: string, name: string, constraints?: ConstraintsInput): boolean;
  /** Replaces the whole set: every type, every resource and every resource error. Unchanged resources keep their version. */
  setSnapshot(resources: Iterable<ResourceMessage | ResourceInput>): void;
  /**
   * The message served under that type and name (the variant with `constraints`, or the unconstrained one), if any:
   * decoded from what is served (the server keeps resources encoded only), so an equal message, not the object
   * given; a resource given as an Any is returned as that Any.
   */
  getResource(typeUrl: string, name: string, constraints?: ConstraintsInput): ResourceMessage | undefined;
  /** The names of the resources of a type (names with only resource errors excluded), in insertion order. */
  resourceNames(typeUrl: string): string[];
  /** The canonical constraints of each resource variant of a name (`true` for the unconstrained one). */
  resourceVariants(typeUrl: string, name: string): string[];
  /** The version of a type: it changes on every change to a resource of that type. "" if the type was never set. */
  typeVersion(typeUrl: string): string;
  /**
   * TP3: makes the name (or one variant of it) fail with `status` instead of being served. Each stream whose
   * subscription by name (or by locator) gets that variant gets the error once, in `resource_errors`, never in the
   * same response as the resource. Setting the resource again clears the error; so do `clearResourceError` and
   * `removeResource`.
   */
  setResourceError(typeUrl: string, name: string, status: StatusInit | Status, options?: ResourceErrorOptions): void;
  /** Removes a resource error (of the variant with `constraints`). Returns false if there was none. */
  clearResourceError(typeUrl: string, name: string, constraints?: ConstraintsInput): boolean;
  /** Removes every resource and resource error. */
  clear(): void;
}

export interface ResourceSetDeps {
  readonly registry: Registry;
  /** A version counter shared by every set of a server, so versions never repeat when a stream changes sets. */
  readonly nextVersion: () => number;
  /** Called after each change with what it changed: per type, which variants of which names (change-scope.ts). */
  readonly onChange: (set: ResourceSetImpl, changed: ChangedVariants) => void;
  /** The server's `allowOverlappingVariants`. */
  readonly allowOverlappingVariants?: boolean;
  /** The server's `contentVersions`: a resource's version is worked out from its bytes (content-version.ts). */
  readonly contentVersions?: boolean;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A variant about to be set, for the overlap check. */
interface Incoming extends VariantCandidate {
  readonly typeUrl: string;
  readonly name: string;
}

/** What one call changes: each type's new version, and which variants of which names (change-scope.ts). */
class Change {
  readonly versions = new Map<string, number>();
  readonly variants = new Map<string, Map<string, Expr[] | typeof WHOLE_NAME>>();

  note(typeUrl: string, name: string, variant: Expr | typeof WHOLE_NAME): void {
    let names = this.variants.get(typeUrl);
    if (!names) {
      names = new Map();
      this.variants.set(typeUrl, names);
    }
    const noted = names.get(name);
    if (variant === WHOLE_NAME) names.set(name, WHOLE_NAME);
    else if (noted === undefined) names.set(name, [variant]);
    else noted?.push(variant);
  }
}

export class ResourceSetImpl implements ResourceSet {
  /** type URL -> name -> the name's variants; names in the order they last changed. */
  readonly #types = new Map<string, Map<string, VariantGroup>>();
  readonly #typeVersions = new Map<string, number>();
  readonly #changeLogs = new Map<string, ChangeLog>();
  readonly #deps: ResourceSetDeps;

  constructor(deps: ResourceSetDeps) {
    this.#deps = deps;
  }

  /** The names of a type and their variants, in the order they last changed. Read-only for callers. */
  entries(typeUrl: string): ReadonlyMap<string, VariantGroup> | undefined {
    return this.#types.get(typeUrl);
  }

  typeUrls(): string[] {
    return [...this.#types.keys()];
  }

  setResource(resource: ResourceMessage, options: ResourceOptions = {}): string {
    const prepared = prepareResource(this.#deps.registry, resource, options);
    const settle = this.#checkOverlaps([prepared], false);
    const changed = new Change();
    const entry = this.#put(prepared, changed);
    settle();
    this.#emit(changed);
    return String(entry.version);
  }

  setResources(resources: Iterable<ResourceMessage | ResourceInput>): void {
    const prepared = prepareResources(this.#deps.registry, resources);
    const settle = this.#checkOverlaps(prepared, false);
    const changed = new Change();
    for (const p of prepared) this.#put(p, changed);
    settle();
    this.#emit(changed);
  }

  removeResource(typeUrl: string, name: string, constraints?: ConstraintsInput): boolean {
    const map = this.#types.get(typeUrl);
    const group = map?.get(name);
    if (!map || !group) return false;
    let variant: Expr | typeof WHOLE_NAME = WHOLE_NAME;
    if (constraints === undefined) map.delete(name);
    else {
      const removed = group.delete(this.#textOf(typeUrl, name, constraints));
      if (!removed) return false;
      if (group.size === 0) map.delete(name);
      variant = removed.variant?.constraints ?? TRUE;
    }
    this.#emit(this.#touch(typeUrl, new Change(), name, variant));
    return true;
  }

  setSnapshot(resources: Iterable<ResourceMessage | ResourceInput>): void {
    const prepared = prepareResources(this.#deps.registry, resources);
    const settle = this.#checkOverlaps(prepared, true);
    const incoming = new Map<string, Map<string, Set<string>>>();
    for (const p of prepared) {
      const names = incoming.get(p.typeUrl) ?? new Map<string, Set<string>>();
      incoming.set(p.typeUrl, names);
      const texts = names.get(p.name) ?? new Set<string>();
      names.set(p.name, texts);
      texts.add(p.variant?.text ?? "");
    }
    const changed = new Change();
    for (const [typeUrl, map] of this.#types) {
      const keep = incoming.get(typeUrl);
      for (const [name, group] of [...map]) {
        const texts = keep?.get(name);
        let removed = false;
        for (const entry of [...group.values()]) {
          const text = entry.variant?.text ?? "";
          if (texts?.has(text) && entry.kind === "resource") continue;
          group.delete(text, false);
          removed = true;
        }
        if (group.size === 0) map.delete(name);
        if (removed) this.#touch(typeUrl, changed, name, WHOLE_NAME);
      }
    }
    for (const p of prepared) this.#put(p, changed);
    settle();
    this.#emit(changed);
  }

  getResource(typeUrl: string, name: string, constraints?: ConstraintsInput): ResourceMessage | undefined {
    const entry = this.#types
      .get(typeUrl)
      ?.get(name)
      ?.get(this.#textOf(typeUrl, name, constraints));
    if (entry?.kind !== "resource") return undefined;
    return entry.schema ? fromBinary(entry.schema, entry.any.value) : entry.any;
  }

  resourceNames(typeUrl: string): string[] {
    const out: string[] = [];
    for (const [name, group] of this.#types.get(typeUrl) ?? []) if (group.hasResource()) out.push(name);
    return out;
  }

  resourceVariants(typeUrl: string, name: string): string[] {
    const out: string[] = [];
    for (const entry of this.#types.get(typeUrl)?.get(name)?.values() ?? []) {
      if (entry.kind === "resource") out.push(entry.variant?.text ?? "true");
    }
    return out;
  }

  typeVersion(typeUrl: string): string {
    const version = this.#typeVersions.get(typeUrl);
    return version === undefined ? "" : String(version);
  }

  setResourceError(
    typeUrl: string,
    name: string,
    status: StatusInit | Status,
    options: ResourceErrorOptions = {},
  ): void {
    if (typeUrl === "") throw new TypeError("setResourceError: typeUrl is empty");
    if (name === "") throw new TypeError("setResourceError: name is empty");
    const errorStatus = toStatus(status);
    if (errorStatus.code === 0) throw new RangeError("setResourceError: status.code must not be OK (0)");
    const variant = variantRef(name, readConstraints(options.constraints, `resource error ${name} of type ${typeUrl}`));
    const allowOverlap = options.allowOverlap ?? false;
    const settle = this.#checkOverlaps([{ typeUrl, name, variant, allowOverlap }], false);
    const changed = this.#touch(typeUrl, new Change(), name, variant?.constraints ?? TRUE);
    const group = this.#group(typeUrl, name);
    const entry: ErrorEntry = {
      kind: "error",
      typeUrl,
      name,
      version: changed.versions.get(typeUrl) ?? 0,
      variant: group.get(variant?.text ?? "")?.variant ?? variant,
      allowOverlap,
      status: errorStatus,
    };
    group.set(entry);
    settle();
    this.#emit(changed);
  }

  clearResourceError(typeUrl: string, name: string, constraints?: ConstraintsInput): boolean {
    const map = this.#types.get(typeUrl);
    const group = map?.get(name);
    const text = this.#textOf(typeUrl, name, constraints);
    const entry = group?.get(text);
    if (!map || !group || entry?.kind !== "error") return false;
    group.delete(text);
    if (group.size === 0) map.delete(name);
    this.#emit(this.#touch(typeUrl, new Change(), name, entry.variant?.constraints ?? TRUE));
    return true;
  }

  clear(): void {
    const changed = new Change();
    for (const [typeUrl, map] of this.#types) {
      if (map.size === 0) continue;
      const names = [...map.keys()];
      map.clear();
      for (const name of names) this.#touch(typeUrl, changed, name, WHOLE_NAME);
    }
    this.#emit(changed);
  }

  /**
   * Names changed in a type after `version` (one of its versions), in the order they last changed; undefined when the
   * log no longer reaches back that far, or `version` is not one of this type's.
   */
  changedSince(typeUrl: string, version: number): readonly string[] | undefined {
    return this.#changeLogs.get(typeUrl)?.since(version);
  }

  #textOf(typeUrl: string, name: string, constraints: ConstraintsInput | undefined): string {
    return variantRef(name, readConstraints(constraints, `${name} of type ${typeUrl}`))?.text ?? "";
  }

  /** The name's variants, created if new, moved to the end of its type (the order names last changed in). */
  #group(typeUrl: string, name: string): VariantGroup {
    let map = this.#types.get(typeUrl);
    if (!map) {
      map = new Map();
      this.#types.set(typeUrl, map);
    }
    const group = map.get(name) ?? new VariantGroup(name);
    map.delete(name);
    map.set(name, group);
    return group;
  }

  /**
   * Refuses variants that would overlap others of their name (OverlappingVariantsError) before anything changes;
   * returns what records, once they are set, whether each name they touch has overlapping variants.
   */
  #checkOverlaps(incoming: readonly Incoming[], replaceAll: boolean): () => void {
    // The walks are forEach callbacks, no loops of this method's own: a snapshot of many resources would make it hot,
    // to be compiled again at its next call (a change of one resource) beside that change.
    const byType = new Map<string, Map<string, Incoming[]>>();
    incoming.forEach((item) => {
      const names = byType.get(item.typeUrl) ?? new Map<string, Incoming[]>();
      byType.set(item.typeUrl, names);
      const list = names.get(item.name);
      if (list) list.push(item);
      else names.set(item.name, [item]);
    });
    const allowAll = this.#deps.allowOverlappingVariants ?? false;
    const outcomes: { group: () => VariantGroup | undefined; overlapping: boolean | undefined }[] = [];
    byType.forEach((names, typeUrl) => {
      const map = this.#types.get(typeUrl);
      names.forEach((items, name) => {
        const group = map?.get(name);
        // One variant of a new name overlaps nothing: the usual resource without variants costs no check.
        if (group === undefined && items.length === 1) return;
        const overlapping = (group ?? new VariantGroup(name)).checkOverlaps(typeUrl, items, replaceAll, allowAll);
        outcomes.push({ group: () => this.#types.get(typeUrl)?.get(name), overlapping });
      });
    });
    return () => {
      for (const { group, overlapping } of outcomes) group()?.settleOverlaps(overlapping);
    };
  }

  /**
   * Gives the type a new version, once per change (everything one call changes shares one version), logs `name`, and
   * notes which of its variants changed (`variant`: its constraints, or WHOLE_NAME when any may have).
   */
  #touch(typeUrl: string, changed: Change, name: string, variant: Expr | typeof WHOLE_NAME): Change {
    let log = this.#changeLogs.get(typeUrl);
    if (!log) {
      log = new ChangeLog();
      this.#changeLogs.set(typeUrl, log);
    }
    if (!changed.versions.has(typeUrl)) {
      const version = this.#deps.nextVersion();
      this.#typeVersions.set(typeUrl, version);
      changed.versions.set(typeUrl, version);
      log.open(version);
    }
    log.log(name, this.#types.get(typeUrl)?.size ?? 0);
    changed.note(typeUrl, name, variant);
    return changed;
  }

  #emit(changed: Change): void {
    if (changed.variants.size > 0) this.#deps.onChange(this, changed.variants);
  }

  #put(p: PreparedResource, changed: Change): ResourceEntry {
    const existing: Entry | undefined = this.#types
      .get(p.typeUrl)
      ?.get(p.name)
      ?.get(p.variant?.text ?? "");
    if (
      !p.force &&
      existing?.kind === "resource" &&
      existing.wrap === p.wrap &&
      existing.doNotCache === p.doNotCache &&
      existing.allowOverlap === p.allowOverlap &&
      existing.any.typeUrl === p.any.typeUrl &&
      bytesEqual(existing.any.value, p.any.value)
    ) {
      return existing;
    }
    this.#touch(p.typeUrl, changed, p.name, p.variant?.constraints ?? TRUE);
    // A forced version must differ from what clients hold, so it is the type's, not the content's.
    const entry: ResourceEntry = {
      kind: "resource",
      typeUrl: p.typeUrl,
      name: p.name,
      version:
        this.#deps.contentVersions && !p.force
          ? contentVersion(p.any, p.doNotCache)
          : (changed.versions.get(p.typeUrl) ?? 0),
      variant: existing?.variant ?? p.variant,
      allowOverlap: p.allowOverlap,
      schema: p.schema,
      any: p.any,
      wrap: p.wrap,
      doNotCache: p.doNotCache,
    };
    this.#group(p.typeUrl, p.name).set(entry);
    return entry;
  }
}
