import type { Params } from "@xdskit/constraint-matcher";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { LoadStatsRequest, LoadStatsResponse } from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import type { ChangedVariants } from "../subscriptions/change-scope.js";
import type { TypeSubscription } from "../subscriptions/subscription.js";
import type { Entry } from "./entry.js";

// What the stream layer reads from wherever its resources come from: the server's own resource sets
// (resource-set.ts), or another source that plugs in through `createManagementServerWithSource` (internal.ts), such
// as a caching relay fed by an upstream server (docs/decisions.md#relay-serving).

/**
 * A subscription its source cannot answer yet (a relay still asking its upstream): nothing is sent for it, not even
 * that it does not exist; what its client holds for it is left as it is; and a state-of-the-world response of a
 * full-state type waits, since it would have to list it.
 */
export const UNANSWERED: unique symbol = Symbol("unanswered");

/** What a subscription gets: a resource or an error, nothing (no such resource), or not known yet. */
export type Choice = Entry | undefined | typeof UNANSWERED;

/** The variants of one name, as the stream layer chooses among them. */
export interface ServedGroup {
  /** What a subscription with these parameters gets (undefined: a subscription by name, an empty map). */
  choose(params: Params | undefined): Choice;
  /**
   * Some parameter map may get one variant while another variant it also matches is served: a response carrying
   * one variant of the name then carries what every subscription of the name on the stream gets.
   */
  readonly overlapping: boolean;
}

/** The resources a stream is served from. */
export interface ServedResources {
  /** The names of a type and their variants, in the order they last changed. Read-only for callers. */
  entries(typeUrl: string): ReadonlyMap<string, ServedGroup> | undefined;
  /** The type's version: it changes with every change to what any subscription of the type gets. "" if never set. */
  typeVersion(typeUrl: string): string;
  /**
   * Names whose answer changed in a type after `version` (one of its versions), in the order they last changed;
   * undefined when not known (every subscribed name is then compared).
   */
  changedSince(typeUrl: string, version: number): readonly string[] | undefined;
  /**
   * Whether the source knows every resource a wildcard subscription of the type with these parameters covers
   * (absent: always). False while a relay still waits for its upstream's answer to the wildcard: a SotW response of
   * a full-state type then waits too, since it would tell the client that what it leaves out is gone.
   */
  wildcardAnswered?(typeUrl: string, params: Readonly<Record<string, string>>): boolean;
}

/** Which resources each node's streams are served from. */
export interface ServedResolver {
  /** What a stream is served from before its node is known. */
  readonly defaultSet: ServedResources;
  resolve(node: Node | undefined): ServedResources;
  /** The resources that win for the DPDS type, if any. */
  resolveDynamicParameters(node: Node | undefined): ServedResources | undefined;
}

/** A stream as a resource source sees it. */
export interface SourceStream {
  readonly id: number;
  /** The node of its first request, once known. */
  readonly node: Node | undefined;
}

/**
 * Resources that come from elsewhere than the server's own sets (a caching relay's upstream): every stream, whatever
 * its node, is served from `resources` (docs/decisions.md#relay-serving).
 */
export interface ResourceSource {
  readonly resources: ServedResources;
  /**
   * What the streams of `node` are served from, when it may differ from `resources` (a relay's resources that
   * depend on who asks, docs/decisions.md#relay-per-node-resources); absent: `resources` for every node. Asked once
   * per stream, when its node is known. Every change the source reports may concern any of them.
   */
  resolve?(node: Node | undefined): ServedResources;
  /** Given, once, the function the source calls after each change: the streams the change may concern are woken. */
  attach(changed: (changed: ChangedVariants) => void): void;
  /**
   * What a stream subscribes to of a type, each time it may have changed (before anything is planned for it; an
   * unchanged subscription keeps its `key`). Throwing `InvalidRequestError` ends the stream with its code.
   */
  subscribed(stream: SourceStream, sub: TypeSubscription): void;
  /** The stream closed: it subscribes to nothing any more. */
  closed(stream: SourceStream): void;
  /**
   * Serves a load-reporting (LRS) stream in place of the server's LRS sink (a relay forwards it upstream):
   * `requests` are its requests once read, checked against the limits and admitted (the first one's node, as for
   * ADS); what it yields is written back; a throw ends the stream (InvalidRequestError: with its code). Absent: the
   * sink.
   */
  serveLrs?(
    requests: AsyncIterable<LoadStatsRequest>,
    signal: AbortSignal,
    peer: string | undefined,
  ): AsyncIterable<LoadStatsResponse>;
}
