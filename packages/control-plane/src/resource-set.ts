import { type DescMessage, fromBinary, type Message, type Registry } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import { type StatusInit, toStatus } from "./status.js";

/**
 * A resource to serve: any protobuf-es message. A `google.protobuf.Any` is taken as already packed and sent as is
 * (useful for resources a client must reject); it needs an explicit `name`.
 */
export type ResourceMessage = Message;

export interface ResourceOptions {
  /**
   * The resource name. Defaults to the message's own name: `name` for Listener, RouteConfiguration and Cluster,
   * `cluster_name` for ClusterLoadAssignment, a string `name` field for other messages.
   */
  readonly name?: string;
  /**
   * The type the resource is served under. Defaults to the message's own type URL. Setting another one serves a
   * resource of the wrong type (its Any keeps the real type URL), for testing clients.
   */
  readonly typeUrl?: string;
  /** Wrap the resource in `envoy.service.discovery.v3.Resource` (overrides the server's `wrapResources`). */
  readonly wrap?: boolean;
  /** Publish a new version even if the resource is byte-for-byte the one already served. */
  readonly force?: boolean;
  /** The message's schema, when it is not in `@xdskit/protos` nor in the server's `typeRegistry`. */
  readonly schema?: DescMessage;
}

/** A resource plus its options, for the calls that take many resources. */
export interface ResourceInput extends ResourceOptions {
  readonly resource: ResourceMessage;
}

/**
 * One set of resources: the server's default set, or the set served to the nodes a selector picks. Every change is
 * pushed to the streams using this set that subscribe to it. Changes made in one synchronous run are pushed together.
 */
export interface ResourceSet {
  /** Adds or replaces one resource. Returns its version. Clears a resource error set for the same name. */
  setResource(resource: ResourceMessage, options?: ResourceOptions): string;
  /** Adds or replaces several resources at once (other resources are kept). */
  setResources(resources: Iterable<ResourceMessage | ResourceInput>): void;
  /** Removes one resource (or its resource error). Returns false if there was nothing under that name. */
  removeResource(typeUrl: string, name: string): boolean;
  /** Replaces the whole set: every type, every resource and every resource error. Unchanged resources keep their version. */
  setSnapshot(resources: Iterable<ResourceMessage | ResourceInput>): void;
  /**
   * The message served under that type and name, if any: decoded from what is served (the server keeps resources
   * encoded only), so an equal message, not the object given; a resource given as an Any is returned as that Any.
   */
  getResource(typeUrl: string, name: string): ResourceMessage | undefined;
  /** The names of the resources of a type (resource errors excluded), in insertion order. */
  resourceNames(typeUrl: string): string[];
  /** The version of a type: it changes on every change to a resource of that type. "" if the type was never set. */
  typeVersion(typeUrl: string): string;
  /**
   * TP3: makes the name fail with `status` instead of being served. Each stream that subscribes to the name by name
   * gets the error once, in `resource_errors`, never in the same response as the resource. Setting the resource
   * again clears the error; so do `clearResourceError` and `removeResource`.
   */
  setResourceError(typeUrl: string, name: string, status: StatusInit | Status): void;
  /** Removes a resource error. Returns false if there was none. */
  clearResourceError(typeUrl: string, name: string): boolean;
  /** Removes every resource and resource error. */
  clear(): void;
}

/** A served resource, packed once. */
export interface ResourceEntry {
  readonly kind: "resource";
  readonly typeUrl: string;
  readonly name: string;
  readonly version: number;
  /** The message's schema (undefined: the resource was given as an Any, and is served as is). */
  readonly schema: DescMessage | undefined;
  readonly any: Any;
  readonly wrap: boolean | undefined;
}

/** A TP3 error standing in for a resource. */
export interface ErrorEntry {
  readonly kind: "error";
  readonly typeUrl: string;
  readonly name: string;
  readonly version: number;
  readonly status: Status;
}

export type Entry = ResourceEntry | ErrorEntry;

export interface ResourceSetDeps {
  readonly registry: Registry;
  /** A version counter shared by every set of a server, so versions never repeat when a stream changes sets. */
  readonly nextVersion: () => number;
  /** Called after each change with the types that changed. */
  readonly onChange: (set: ResourceSetImpl, typeUrls: ReadonlySet<string>) => void;
}

interface Prepared {
  readonly typeUrl: string;
  readonly name: string;
  readonly schema: DescMessage | undefined;
  readonly any: Any;
  readonly wrap: boolean | undefined;
  readonly force: boolean;
}

const ANY_TYPE_NAME = "google.protobuf.Any";

function defaultName(message: ResourceMessage): string | undefined {
  if (message.$typeName === "envoy.config.endpoint.v3.ClusterLoadAssignment") {
    return (message as unknown as { clusterName: string }).clusterName;
  }
  const name = (message as unknown as { name?: unknown }).name;
  return typeof name === "string" ? name : undefined;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

interface ChangeLogEntry {
  readonly version: number;
  readonly names: string[];
}

/** What recent versions of a type changed; `floor`: the version before the oldest entry kept (-1: none dropped). */
interface ChangeLog {
  floor: number;
  readonly entries: ChangeLogEntry[];
  names: number;
}

const CHANGE_LOG_VERSIONS = 64;

export class ResourceSetImpl implements ResourceSet {
  readonly #types = new Map<string, Map<string, Entry>>();
  readonly #typeVersions = new Map<string, number>();
  readonly #changeLogs = new Map<string, ChangeLog>();
  readonly #deps: ResourceSetDeps;

  constructor(deps: ResourceSetDeps) {
    this.#deps = deps;
  }

  /** The entries of a type, resources and errors, in insertion order. Read-only for callers. */
  entries(typeUrl: string): ReadonlyMap<string, Entry> | undefined {
    return this.#types.get(typeUrl);
  }

  typeUrls(): string[] {
    return [...this.#types.keys()];
  }

  setResource(resource: ResourceMessage, options: ResourceOptions = {}): string {
    const prepared = this.#prepare(resource, options);
    const changed = new Map<string, number>();
    const entry = this.#put(prepared, changed);
    this.#emit(changed);
    return String(entry.version);
  }

  setResources(resources: Iterable<ResourceMessage | ResourceInput>): void {
    const prepared = this.#prepareAll(resources);
    const changed = new Map<string, number>();
    for (const p of prepared) this.#put(p, changed);
    this.#emit(changed);
  }

  removeResource(typeUrl: string, name: string): boolean {
    const map = this.#types.get(typeUrl);
    if (!map?.delete(name)) return false;
    this.#emit(this.#touch(typeUrl, new Map(), name));
    return true;
  }

  setSnapshot(resources: Iterable<ResourceMessage | ResourceInput>): void {
    const prepared = this.#prepareAll(resources);
    const incoming = new Map<string, Set<string>>();
    for (const p of prepared) {
      let names = incoming.get(p.typeUrl);
      if (!names) {
        names = new Set();
        incoming.set(p.typeUrl, names);
      }
      names.add(p.name);
    }
    const changed = new Map<string, number>();
    for (const [typeUrl, map] of this.#types) {
      const keep = incoming.get(typeUrl);
      for (const name of [...map.keys()]) {
        if (!keep?.has(name)) {
          map.delete(name);
          this.#touch(typeUrl, changed, name);
        }
      }
    }
    for (const p of prepared) this.#put(p, changed);
    this.#emit(changed);
  }

  getResource(typeUrl: string, name: string): ResourceMessage | undefined {
    const entry = this.#types.get(typeUrl)?.get(name);
    if (entry?.kind !== "resource") return undefined;
    return entry.schema ? fromBinary(entry.schema, entry.any.value) : entry.any;
  }

  resourceNames(typeUrl: string): string[] {
    const out: string[] = [];
    for (const entry of this.#types.get(typeUrl)?.values() ?? []) if (entry.kind === "resource") out.push(entry.name);
    return out;
  }

  typeVersion(typeUrl: string): string {
    const version = this.#typeVersions.get(typeUrl);
    return version === undefined ? "" : String(version);
  }

  setResourceError(typeUrl: string, name: string, status: StatusInit | Status): void {
    if (typeUrl === "") throw new TypeError("setResourceError: typeUrl is empty");
    if (name === "") throw new TypeError("setResourceError: name is empty");
    const errorStatus = toStatus(status);
    if (errorStatus.code === 0) throw new RangeError("setResourceError: status.code must not be OK (0)");
    const changed = this.#touch(typeUrl, new Map(), name);
    this.#typeMap(typeUrl).set(name, {
      kind: "error",
      typeUrl,
      name,
      version: changed.get(typeUrl) ?? 0,
      status: errorStatus,
    });
    this.#emit(changed);
  }

  clearResourceError(typeUrl: string, name: string): boolean {
    const map = this.#types.get(typeUrl);
    if (map?.get(name)?.kind !== "error") return false;
    map.delete(name);
    this.#emit(this.#touch(typeUrl, new Map(), name));
    return true;
  }

  clear(): void {
    const changed = new Map<string, number>();
    for (const [typeUrl, map] of this.#types) {
      if (map.size === 0) continue;
      const names = [...map.keys()];
      map.clear();
      for (const name of names) this.#touch(typeUrl, changed, name);
    }
    this.#emit(changed);
  }

  #typeMap(typeUrl: string): Map<string, Entry> {
    let map = this.#types.get(typeUrl);
    if (!map) {
      map = new Map();
      this.#types.set(typeUrl, map);
    }
    return map;
  }

  /**
   * Names changed in a type after `version` (one of its versions), in the order they last changed (the order the set
   * keeps them in); undefined when the log no longer reaches back that far, or `version` is not one of this type's.
   */
  changedSince(typeUrl: string, version: number): readonly string[] | undefined {
    const log = this.#changeLogs.get(typeUrl);
    if (!log) return undefined;
    const from = log.entries.findIndex((entry) => entry.version === version);
    if (from < 0 && log.floor !== version) return undefined;
    const names = new Set<string>();
    for (const entry of log.entries.slice(from + 1)) {
      for (const name of entry.names) {
        names.delete(name);
        names.add(name);
      }
    }
    return [...names];
  }

  /** Gives the type a new version, once per call (everything one call changes shares one version), and logs `name`. */
  #touch(typeUrl: string, changed: Map<string, number>, name: string): Map<string, number> {
    let log = this.#changeLogs.get(typeUrl);
    if (!log) {
      log = { floor: -1, entries: [], names: 0 };
      this.#changeLogs.set(typeUrl, log);
    }
    if (!changed.has(typeUrl)) {
      const version = this.#deps.nextVersion();
      this.#typeVersions.set(typeUrl, version);
      changed.set(typeUrl, version);
      log.entries.push({ version, names: [] });
    }
    (log.entries.at(-1) as ChangeLogEntry).names.push(name);
    log.names++;
    // Bounded: the last CHANGE_LOG_VERSIONS versions, and no more names than the type holds (past that, comparing
    // everything costs no more than reading the log).
    const budget = Math.max(1024, this.#types.get(typeUrl)?.size ?? 0);
    while (log.entries.length > 1 && (log.entries.length > CHANGE_LOG_VERSIONS || log.names > budget)) {
      const dropped = log.entries.shift() as ChangeLogEntry;
      log.floor = dropped.version;
      log.names -= dropped.names.length;
    }
    return changed;
  }

  #emit(changed: Map<string, number>): void {
    if (changed.size > 0) this.#deps.onChange(this, new Set(changed.keys()));
  }

  #put(p: Prepared, changed: Map<string, number>): ResourceEntry {
    const map = this.#typeMap(p.typeUrl);
    const existing = map.get(p.name);
    if (
      !p.force &&
      existing?.kind === "resource" &&
      existing.wrap === p.wrap &&
      existing.any.typeUrl === p.any.typeUrl &&
      bytesEqual(existing.any.value, p.any.value)
    ) {
      return existing;
    }
    this.#touch(p.typeUrl, changed, p.name);
    const entry: ResourceEntry = {
      kind: "resource",
      typeUrl: p.typeUrl,
      name: p.name,
      version: changed.get(p.typeUrl) ?? 0,
      schema: p.schema,
      any: p.any,
      wrap: p.wrap,
    };
    // Re-inserting keeps the map in the order resources were last set.
    map.delete(p.name);
    map.set(p.name, entry);
    return entry;
  }

  #prepareAll(resources: Iterable<ResourceMessage | ResourceInput>): Prepared[] {
    const out: Prepared[] = [];
    const seen = new Set<string>();
    for (const item of resources) {
      const prepared = "$typeName" in item ? this.#prepare(item, {}) : this.#prepare(item.resource, item);
      const key = `${prepared.typeUrl}\u0000${prepared.name}`;
      if (seen.has(key)) throw new TypeError(`duplicate resource ${prepared.name} of type ${prepared.typeUrl}`);
      seen.add(key);
      out.push(prepared);
    }
    return out;
  }

  #prepare(message: ResourceMessage, options: ResourceOptions): Prepared {
    let any: Any;
    let schema: DescMessage | undefined;
    if (message.$typeName === ANY_TYPE_NAME) {
      any = message as Any;
      if (options.name === undefined) throw new TypeError("a resource given as google.protobuf.Any needs options.name");
    } else {
      schema = options.schema ?? this.#deps.registry.getMessage(message.$typeName);
      if (!schema) {
        throw new TypeError(`unknown message type ${message.$typeName}: pass options.schema or a server typeRegistry`);
      }
      any = anyPack(schema, message);
    }
    const name = options.name ?? defaultName(message);
    if (name === undefined || name === "") {
      throw new TypeError(`resource of type ${message.$typeName} has no name: set its name field or options.name`);
    }
    const typeUrl = options.typeUrl ?? any.typeUrl;
    if (typeUrl === "") throw new TypeError(`resource ${name} has no type URL`);
    return { typeUrl, name, schema, any, wrap: options.wrap, force: options.force ?? false };
  }
}
