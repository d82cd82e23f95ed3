import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { type Node, NodeSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { StatusSchema } from "@xdskit/protos/google/rpc/status_pb";
import type { ErrorEntry } from "../resources/entry.js";
import type { ServedGroup } from "../resources/served.js";
import { VariantGroup } from "../resources/variant-group.js";
import type { TypeSubscription } from "../subscriptions/subscription.js";
import type { PeerIdentity } from "./identity.js";

// Per-resource read authorization (docs/security.md#per-resource-authorization): a stream sees the type's resources
// through its identity's grants. A name it may not read is, to a subscription naming it, a TP3 error with
// PERMISSION_DENIED whether or not the resource exists; to a wildcard, absent.

/** Who a stream serves: its peer, and the node its first request claimed (checked against the peer if configured). */
export interface StreamIdentity {
  readonly peer: PeerIdentity;
  readonly node: Node | undefined;
}

/**
 * Whether `identity` may read the resource `name` of `typeUrl`. Synchronous, and the same answer every time until
 * `authorizationChanged()`.
 */
export type CanRead = (identity: StreamIdentity, typeUrl: string, name: string) => boolean;

/**
 * Names the identities that `canRead` treats alike: streams of one class share the responses worked out for them
 * (fan-out). Default: the client certificate and the whole node, so that no two identities that a policy could tell
 * apart share; a policy that reads less (e.g. only the SPIFFE ID's namespace) restores sharing by saying so.
 */
export type AuthorizationClass = (identity: StreamIdentity) => string;

/** A stream's view of the read policy. */
export interface ReadAccess {
  /** Part of the plan cache's slot: streams of equal keys see equal resources. Changes with `authorizationChanged()`. */
  readonly key: string;
  canRead(typeUrl: string, name: string): boolean;
}

/** The version of the denial a client is sent (server versions start at 1). */
const DENIED_VERSION = 0;

function defaultClass(identity: StreamIdentity): string {
  const node = identity.node ? Buffer.from(toBinary(NodeSchema, identity.node)).toString("base64") : "";
  return `${identity.peer.certificate?.fingerprint256 ?? ""}|${node}`;
}

/** The read policy of a server: each stream's access, and the epoch that `authorizationChanged()` moves on. */
export interface ReadPolicy {
  /** The access of a stream with this identity. */
  accessFor(identity: StreamIdentity): ReadAccess;
  /** The answers of `canRead` may have changed: every access key changes. */
  changed(): void;
}

export function createReadPolicy(canRead: CanRead, classOf: AuthorizationClass = defaultClass): ReadPolicy {
  let epoch = 0;
  return {
    accessFor(identity) {
      const cls = classOf(identity);
      let key = "";
      let keyEpoch = -1;
      return {
        get key() {
          if (keyEpoch !== epoch) {
            keyEpoch = epoch;
            key = `\u0000${epoch}:${cls}`;
          }
          return key;
        },
        canRead: (typeUrl, name) => canRead(identity, typeUrl, name),
      };
    },
    changed() {
      epoch++;
    },
  };
}

function denial(typeUrl: string, name: string): VariantGroup {
  const entry: ErrorEntry = {
    kind: "error",
    typeUrl,
    name,
    version: DENIED_VERSION,
    variant: undefined,
    allowOverlap: false,
    status: create(StatusSchema, { code: Code.PermissionDenied, message: "permission denied" }),
  };
  const group = new VariantGroup(name);
  group.set(entry);
  return group;
}

/**
 * The resources of a type as a stream with `access` sees them, for the subscription `sub`: the names it may read as
 * they are; a name it may not read that `sub` names, a PERMISSION_DENIED error (for every subscription of the name,
 * whatever the resource's variants); any other name it may not read, nothing. Built for one plan: `sub` must not
 * change while it is in use.
 *
 * Limit: a wildcard subscription that also names the name with parameters only (a locator) holds, for the name
 * itself, what it held before a revocation until it unsubscribes (TP3 errors do not cover wildcards); nothing new
 * is sent to it.
 */
export function authorizedEntries(
  entries: ReadonlyMap<string, ServedGroup> | undefined,
  sub: TypeSubscription,
  access: ReadAccess,
): ReadonlyMap<string, ServedGroup> {
  const typeUrl = sub.typeUrl;
  const denied = new Map<string, VariantGroup>();
  const deniedGroup = (name: string): VariantGroup => {
    let group = denied.get(name);
    if (!group) {
      group = denial(typeUrl, name);
      denied.set(name, group);
    }
    return group;
  };
  // The type's names as the stream sees them, in the set's order, then the denied names it subscribes to that do
  // not exist (a denial does not tell whether the resource exists).
  const visible = function* (): IterableIterator<[string, ServedGroup]> {
    for (const entry of entries ?? []) {
      if (access.canRead(typeUrl, entry[0])) yield entry;
      else if (sub.hasName(entry[0])) yield [entry[0], deniedGroup(entry[0])];
    }
    for (const name of sub.names()) {
      if (!entries?.has(name) && !access.canRead(typeUrl, name)) yield [name, deniedGroup(name)];
    }
  };
  const view: ReadonlyMap<string, ServedGroup> = {
    get(name) {
      if (access.canRead(typeUrl, name)) return entries?.get(name);
      return sub.hasName(name) ? deniedGroup(name) : undefined;
    },
    has(name) {
      return view.get(name) !== undefined;
    },
    get size() {
      let count = 0;
      for (const _ of visible()) count++;
      return count;
    },
    entries: visible,
    [Symbol.iterator]: visible,
    keys: () => project(visible(), ([name]) => name),
    values: () => project(visible(), ([, group]) => group),
    forEach(callback, thisArg) {
      for (const [name, group] of visible()) callback.call(thisArg, group, name, view);
    },
  };
  return view;
}

function* project<T, U>(items: Iterable<T>, f: (item: T) => U): IterableIterator<U> {
  for (const item of items) yield f(item);
}
