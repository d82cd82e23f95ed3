// ring_hash's per-endpoint state rules, aggregated state and picker walk (A42 as amended by A61/A62).
// See docs/decisions.md#policies-ring-hash.

import type { HashRing } from "./ring-hash-ring.js";

export type EndpointConnectivity = "IDLE" | "CONNECTING" | "READY" | "TRANSIENT_FAILURE";

/**
 * The state ring_hash acts on, given the state it last used and the one a connection now reports (A42):
 * after TRANSIENT_FAILURE an endpoint stays TRANSIENT_FAILURE through CONNECTING until it is READY (sticky TF),
 * and a READY endpoint whose connection drops counts as IDLE, not TRANSIENT_FAILURE.
 */
export function nextRingHashEndpointState(
  previous: EndpointConnectivity | undefined,
  reported: EndpointConnectivity,
): EndpointConnectivity {
  if (previous === "TRANSIENT_FAILURE" && (reported === "CONNECTING" || reported === "IDLE"))
    return "TRANSIENT_FAILURE";
  if (previous === "READY" && reported === "TRANSIENT_FAILURE") return "IDLE";
  return reported;
}

/** ring_hash's aggregated state (A42's six rules, in order). */
export function ringHashAggregateState(states: readonly EndpointConnectivity[]): EndpointConnectivity {
  let ready = 0;
  let connecting = 0;
  let idle = 0;
  let failed = 0;
  for (const s of states) {
    if (s === "READY") ready++;
    else if (s === "CONNECTING") connecting++;
    else if (s === "IDLE") idle++;
    else failed++;
  }
  if (ready > 0) return "READY";
  if (failed >= 2) return "TRANSIENT_FAILURE";
  if (connecting > 0) return "CONNECTING";
  if (failed === 1 && states.length > 1) return "CONNECTING";
  if (idle > 0) return "IDLE";
  return "TRANSIENT_FAILURE";
}

/**
 * The endpoint ring_hash connects without a pick (A61): while the aggregated state is CONNECTING or
 * TRANSIENT_FAILURE and no endpoint is CONNECTING, the first IDLE endpoint; otherwise -1.
 */
export function ringHashProactiveConnect(states: readonly EndpointConnectivity[]): number {
  const aggregate = ringHashAggregateState(states);
  if (aggregate !== "CONNECTING" && aggregate !== "TRANSIENT_FAILURE") return -1;
  if (states.includes("CONNECTING")) return -1;
  return states.indexOf("IDLE");
}

/** Pick outcomes, packed with the endpoint as `endpoint * 4 + action` so a pick allocates nothing. */
export const RING_PICK_READY = 0;
/** The endpoint is IDLE: start its connection and queue the call. */
export const RING_PICK_CONNECT = 1;
/** The endpoint is CONNECTING: queue the call. */
export const RING_PICK_QUEUE = 2;
/** Every endpoint on the ring is in TRANSIENT_FAILURE: fail with the endpoint the hash maps to. */
export const RING_PICK_FAIL = 3;

export function ringPickAction(packed: number): number {
  return packed & 3;
}

export function ringPickEndpoint(packed: number): number {
  return packed >>> 2;
}

/**
 * A61's walk: from the entry the hash maps to, the first entry whose endpoint is not in TRANSIENT_FAILURE
 * decides (READY picks it, IDLE connects it and queues, CONNECTING queues); if all are failed, the pick fails
 * with the first entry's endpoint. `states[i]` is endpoint i's state. Returns -1 for an empty ring.
 */
export function ringHashPick(
  ring: HashRing,
  hashHi: number,
  hashLo: number,
  states: readonly EndpointConnectivity[],
): number {
  const size = ring.size;
  if (size === 0) return -1;
  const first = ring.find(hashHi, hashLo);
  for (let i = 0; i < size; i++) {
    let at = first + i;
    if (at >= size) at -= size;
    const endpoint = ring.endpointAt(at);
    const state = states[endpoint];
    if (state === "READY") return endpoint * 4 + RING_PICK_READY;
    if (state === "IDLE") return endpoint * 4 + RING_PICK_CONNECT;
    if (state === "CONNECTING") return endpoint * 4 + RING_PICK_QUEUE;
  }
  return ring.endpointAt(first) * 4 + RING_PICK_FAIL;
}
