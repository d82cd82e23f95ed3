// One upstream wildcard subscription (type, parameter map): an `@xdskit/xds-client` `watchAll` whose names each hold
// the answer for those parameters in their group of the relay table, which every downstream wildcard subscriber with
// those parameters is served from (docs/decisions.md#relay-wildcards).
import type { ResourceType, XdsClient, XdsError } from "@xdskit/xds-client";
import type { Logger } from "./logger.js";
import type { LongTimer } from "./long-timer.js";
import { type Params, paramsKey, subscriptionText } from "./params.js";
import type { PassedResource } from "./pass-through-type.js";
import type { Answerable, RelayGroup } from "./relay-group.js";
import type { RelayTable } from "./relay-table.js";

export interface UpstreamWildcard {
  readonly typeUrl: string;
  readonly params: Params;
  /** Downstream wildcard subscriptions using it. */
  refs: number;
  idle: LongTimer | undefined;
  /** Ends the watch and lets go of every name it held. */
  close(): void;
}

export interface WildcardOptions {
  readonly client: XdsClient;
  readonly table: RelayTable;
  readonly type: ResourceType<PassedResource>;
  readonly params: Params;
  readonly logger: Logger;
  /**
   * A `do_not_cache` resource among what the wildcard covers: served (a node's own stream), or left out (the shared
   * stream: it depends on who asks, and a wildcard is not fetched per node).
   */
  readonly doNotCache: "serve" | "leave-out";
}

/** Starts the upstream wildcard; what it hears goes into the table at once. */
export function watchWildcard(options: WildcardOptions): UpstreamWildcard {
  const { table, type, params, logger } = options;
  const typeUrl = type.typeUrl;
  const key = paramsKey(params);
  /** The names it holds an answer for, with the answerable it holds in each name's group. */
  const held = new Map<string, { readonly group: RelayGroup; readonly answerable: Answerable }>();
  let closed = false;
  table.setWildcard(typeUrl, key, false);

  const hold = (name: string) => {
    let entry = held.get(name);
    if (!entry) {
      const group = table.group(typeUrl, name);
      entry = { group, answerable: group.add(params) };
      held.set(name, entry);
    }
    return entry;
  };
  const letGo = (name: string) => {
    const entry = held.get(name);
    if (!entry) return;
    held.delete(name);
    entry.group.remove(key);
    table.dropIfEmpty(entry.group);
  };
  const answer = (
    name: string,
    entry: { group: RelayGroup; answerable: Answerable },
    choice: Parameters<RelayGroup["answer"]>[1],
  ) => {
    if (entry.group.answer(entry.answerable, choice)) table.changed(typeUrl, name, params);
  };
  const failed = (name: string, error: XdsError) => {
    if (error.kind === "does_not_exist") {
      // Removed upstream: no longer among what the wildcard covers.
      const entry = held.get(name);
      if (entry) answer(name, entry, undefined);
      letGo(name);
      return;
    }
    // A resource the relay could not read, or a TP3 error: wildcard subscribers keep what they have (TP3 errors do
    // not go to names a wildcard covers); a subscription by name of it is told, through its own watch.
    const entry = hold(name);
    answer(name, entry, entry.group.errorEntry(error.code, `relay: ${error.detail}`, entry.answerable.lastVariant));
  };

  const cancel = options.client.watchAll(
    type,
    {
      onResourceChanged(name, result) {
        if (closed) return;
        if (!result.ok) {
          failed(name, result.error);
          return;
        }
        const passed = result.resource;
        if (passed.doNotCache && options.doNotCache === "leave-out") {
          logger.warn(
            `${subscriptionText(name, params)}: the upstream marks it do_not_cache; left out of what the wildcard serves`,
          );
          if (held.has(name)) answer(name, hold(name), undefined);
          letGo(name);
          return;
        }
        const entry = hold(name);
        answer(name, entry, entry.group.resourceEntry(passed));
      },
      onAmbientError(error, name) {
        // The upstream unreachable (no name), or a newer version it rejected: served from cache meanwhile.
        logger.debug(`wildcard ${subscriptionText(typeUrl, params)}${name ? ` ${name}` : ""}: ${error.message}`);
      },
      onAnswered() {
        if (!closed) table.setWildcard(typeUrl, key, true);
      },
    },
    { dynamicParameters: params },
  );

  return {
    typeUrl,
    params,
    refs: 0,
    idle: undefined,
    close() {
      if (closed) return;
      closed = true;
      cancel();
      for (const name of [...held.keys()]) letGo(name);
      table.setWildcard(typeUrl, key, undefined);
    },
  };
}
