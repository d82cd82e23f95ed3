// withDynamicParameters: DPDS over any XdsClient, with the same interface. Each watch is subscribed on the inner client
// with the bootstrap's parameters for its name (the root map for old-style names, the authority's for xdstp names)
// or the watch's own, merged under the parameters the DPDS resource gives its type (DPDS wins per key), and moves
// when those change (docs/decisions.md#dpds-wrapper).
import { create } from "@bufbuild/protobuf";
import { UpdateFailureStateSchema } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import type { ClientConfig } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import {
  type Logger,
  type ResourceType,
  type ResourceWatcher,
  StatusCode,
  type WatchOptions,
  type XdsClient,
  XdsError,
} from "@xdskit/xds-client";
import { loggerFromEnvironment } from "@xdskit/xds-client/internal";
import { DPDS_TYPE_URL } from "./dpds-resource-type.js";
import { createDpdsSource, type DpdsSource, type Follower } from "./dpds-source.js";
import { wrapperLog } from "./log.js";
import { createMovingWatch, type Parameters } from "./moving-watch.js";

/** How long a watch made before the DPDS resource is known waits for it, by default: the xDS does-not-exist timer. */
export const DEFAULT_DPDS_WAIT_MS = 15_000;

/** The DPDS resource watched unless `resourceName` says otherwise; the server gives each node its own content. */
export const DEFAULT_DPDS_RESOURCE_NAME = "dynamic-parameters";

export interface DynamicParametersOptions {
  /**
   * The DPDS resource to watch: any name the inner client can watch (an `xdstp://` name picks its authority's
   * servers). Default `dynamic-parameters`; its content is the server's answer for this node.
   */
  readonly resourceName?: string;
  /**
   * Per authority (for the `xdstp://` names of that authority): another DPDS resource, or `null` for none (its
   * watches go to the inner client unchanged). Authorities not listed use `resourceName`.
   */
  readonly authorityResourceNames?: Readonly<Record<string, string | null>>;
  /**
   * How long a watch made before the DPDS resource is known waits for it before subscribing without DPDS parameters
   * (it moves once the resource comes). Default 15 s; 0 subscribes at once.
   */
  readonly waitForDpdsMs?: number;
  readonly logger?: Logger;
}

const XDSTP = "xdstp://";

/** The authority of an xdstp name; undefined for an old-style name; null when it has none. */
function authorityOf(name: string): string | undefined | null {
  if (!name.startsWith("xdstp:")) return undefined;
  if (!name.startsWith(XDSTP)) return null;
  const slash = name.indexOf("/", XDSTP.length);
  return slash < 0 ? null : name.slice(XDSTP.length, slash);
}

/** The message full name of a type URL (`type.googleapis.com/x.y.Z` → `x.y.Z`): the key of the DPDS map. */
function typeNameOf(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
}

/** `base` with `overrides` on top; built with data properties only, so any key (even `__proto__`) is a parameter. */
function merge(base: Parameters, overrides: Parameters): Parameters {
  return Object.freeze(Object.fromEntries([...Object.entries(base), ...Object.entries(overrides)]));
}

/**
 * Wraps `client` so that every watch is subscribed with the parameters a DPDS resource gives its type, merged over
 * the bootstrap's. The result has the client's interface; closing it closes `client`. With dynamic parameters
 * switched off in `client.features`, watches pass through unchanged and no DPDS resource is watched.
 * Throws an `XdsError` (INVALID_ARGUMENT) naming a bad option.
 */
export function withDynamicParameters(client: XdsClient, options: DynamicParametersOptions = {}): XdsClient {
  const log = wrapperLog(options.logger ?? loggerFromEnvironment("dpds-wrapper"));
  const waitMs = options.waitForDpdsMs ?? DEFAULT_DPDS_WAIT_MS;
  if (!(waitMs >= 0)) throw invalidOption("waitForDpdsMs must be a number of milliseconds, 0 or more");
  const resourceName = options.resourceName ?? DEFAULT_DPDS_RESOURCE_NAME;
  if (resourceName === "") throw invalidOption("resourceName is empty");
  const bootstrap = client.bootstrap;
  const enabled = client.features.dynamicParameters;
  if (!enabled) log.info("dynamic parameters are switched off in the client: DPDS is not used");

  const sources = new Map<string, DpdsSource>();
  const sourceOf = (dpdsName: string): DpdsSource => {
    let source = sources.get(dpdsName);
    if (!source) {
      source = createDpdsSource(client, dpdsName, waitMs, log);
      sources.set(dpdsName, source);
    }
    return source;
  };
  if (enabled) {
    sourceOf(resourceName);
    for (const name of Object.values(options.authorityResourceNames ?? {})) if (name !== null) sourceOf(name);
  }
  let closed = false;

  /** The DPDS resource and bootstrap parameters of a name; undefined: the watch goes to the inner client as is. */
  function placeOf(name: string): { source: DpdsSource; bootstrapParameters: Parameters } | undefined {
    const authority = authorityOf(name);
    if (authority === undefined)
      return { source: sourceOf(resourceName), bootstrapParameters: bootstrap.dynamicParameters };
    // A name the inner client will refuse (no authority, unknown authority, federation off) is passed to it as is.
    if (authority === null || !client.features.federation) return undefined;
    const config = bootstrap.authorities.get(authority);
    if (!config) return undefined;
    const dpdsName = options.authorityResourceNames?.[authority];
    if (dpdsName === null) return undefined;
    return { source: sourceOf(dpdsName ?? resourceName), bootstrapParameters: config.dynamicParameters };
  }

  function watch<T>(type: ResourceType<T>, name: string, watcher: ResourceWatcher<T>, watchOptions?: WatchOptions) {
    const place = enabled && !closed && type.typeUrl !== DPDS_TYPE_URL ? placeOf(name) : undefined;
    if (!place) return client.watch(type, name, watcher, watchOptions);
    const { source } = place;
    const base = watchOptions?.dynamicParameters ?? place.bootstrapParameters;
    const typeName = typeNameOf(type.typeUrl);
    const moving = createMovingWatch(
      watcher,
      (parameters, inner) => client.watch(type, name, inner, { ...watchOptions, dynamicParameters: parameters }),
      log,
      `${typeName} ${name}`,
    );
    const follower: Follower = { follow: () => moving.moveTo(merge(base, source.parametersFor(typeName))) };
    source.add(follower);
    if (source.settled) follower.follow();
    let cancelled = false;
    return () => {
      if (cancelled) return;
      cancelled = true;
      source.remove(follower);
      moving.cancel();
    };
  }

  return {
    bootstrap,
    features: client.features,
    watch,
    // Wildcards pass through: subscribed with the inner client's parameters, not the DPDS ones (README "Not done").
    watchAll: (type, watcher, watchOptions) => client.watchAll(type, watcher, watchOptions),
    dumpResources() {
      return annotate(client.dumpResources(), sources.values());
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const source of sources.values()) source.close();
      await client.close();
    },
  };
}

function invalidOption(detail: string): XdsError {
  return new XdsError(StatusCode.INVALID_ARGUMENT, "invalid_options", `withDynamicParameters: ${detail}`);
}

/**
 * CSDS: a DPDS resource that gives no parameters says why in its `error_state`, when the inner client recorded no
 * failure of its own there (no answer in time, the servers unreachable).
 */
function annotate(config: ClientConfig, sources: Iterable<DpdsSource>): ClientConfig {
  for (const source of sources) {
    const reason = source.reason;
    if (reason === undefined) continue;
    const n = source.resourceName;
    for (const entry of config.genericXdsConfigs) {
      if (entry.typeUrl !== DPDS_TYPE_URL || entry.errorState !== undefined) continue;
      if (entry.name !== n && !(entry.name.startsWith(`${n}{`) && entry.name.endsWith("}"))) continue;
      entry.errorState = create(UpdateFailureStateSchema, {
        details: `no dynamic parameters from this resource: ${reason}`,
      });
    }
  }
  return config;
}
