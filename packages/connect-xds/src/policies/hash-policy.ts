// A route's `hash_policy` list (A42): the request hash ring_hash picks with. Only `header` and `filter_state`
// with key `io.grpc.channel_id` produce a hash; every other kind produces none (never an error), as A42 says.
// See docs/decisions.md#policies-ring-hash.

import { xxHash64 } from "./xx-hash64.js";

export const CHANNEL_ID_FILTER_STATE_KEY = "io.grpc.channel_id";

export type HashPolicy =
  | {
      readonly kind: "header";
      /** Lower-case header name. */
      readonly headerName: string;
      /** `regex_rewrite`: every match replaced (RE2 GlobalReplace), substitution already in JS `$n` form. */
      readonly rewrite?: { readonly pattern: RegExp; readonly substitution: string } | undefined;
      readonly terminal: boolean;
    }
  | { readonly kind: "channel_id"; readonly terminal: boolean }
  /** A kind gRPC does not support (cookie, connection_properties, query_parameter, other filter_state keys). */
  | { readonly kind: "none"; readonly terminal: boolean };

/**
 * An RE2 substitution string (`\0`..`\9` name groups, `\\` a backslash) in the form String.replace takes
 * (`$&`, `$1`.., `$$`). Throws on a trailing or unknown escape, as RE2 rejects the rewrite.
 */
export function re2SubstitutionToJs(substitution: string): string {
  let out = "";
  for (let i = 0; i < substitution.length; i++) {
    const c = substitution[i] as string;
    if (c === "$") out += "$$";
    else if (c !== "\\") out += c;
    else {
      const next = substitution[++i];
      if (next === undefined) throw new Error(`regex_rewrite substitution "${substitution}" ends in a lone backslash`);
      if (next === "\\") out += "\\";
      else if (next === "0") out += "$&";
      else if (next >= "1" && next <= "9") out += `$${next}`;
      else throw new Error(`regex_rewrite substitution "${substitution}" has an unknown escape \\${next}`);
    }
  }
  return out;
}

/** The value a header hash policy reads, as A28's header matching sees headers; undefined when absent. */
export function hashHeaderValue(headers: Headers, name: string): string | undefined {
  // Binary headers are never hashed; content-type is what gRPC sends, whatever codec suffix the call uses.
  if (name.endsWith("-bin")) return undefined;
  if (name === "content-type") return "application/grpc";
  return headers.get(name) ?? undefined;
}

/**
 * The request hash of the policies in order, combined as Envoy does (hash = rotl(hash, 1) ^ policyHash);
 * a terminal policy that leaves a hash stops the list. Undefined when no policy produced a hash: the caller then
 * uses a random hash (A42). `channelId` is the transport's random 64-bit id.
 */
export function computeRequestHash(
  policies: readonly HashPolicy[],
  headers: Headers,
  channelId: bigint,
): bigint | undefined {
  let hash: bigint | undefined;
  for (const policy of policies) {
    let policyHash: bigint | undefined;
    if (policy.kind === "header") {
      let value = hashHeaderValue(headers, policy.headerName);
      if (value !== undefined) {
        if (policy.rewrite !== undefined) value = value.replace(policy.rewrite.pattern, policy.rewrite.substitution);
        policyHash = xxHash64(value);
      }
    } else if (policy.kind === "channel_id") {
      policyHash = channelId;
    }
    if (policyHash !== undefined) {
      hash =
        hash === undefined
          ? policyHash
          : ((((hash << 1n) | (hash >> 63n)) & 0xffff_ffff_ffff_ffffn) ^ policyHash) & 0xffff_ffff_ffff_ffffn;
    }
    if (policy.terminal && hash !== undefined) break;
  }
  return hash;
}

/** A uniformly random unsigned 64-bit value from a [0, 1) source (channel ids and random request hashes). */
export function random64(random: () => number = Math.random): bigint {
  const hi = Math.floor(random() * 0x1_0000_0000) >>> 0;
  const lo = Math.floor(random() * 0x1_0000_0000) >>> 0;
  return (BigInt(hi) << 32n) | BigInt(lo);
}
