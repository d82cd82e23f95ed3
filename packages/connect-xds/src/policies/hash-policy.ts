// A route's `hash_policy` list (A42): the request hash ring_hash picks with. xds-client keeps only `header` and
// `filter_state` with key `io.grpc.channel_id` (every other kind produces no hash, never an error, as A42 says).
// See docs/decisions.md#policies-ring-hash.

import type { HashPolicy } from "@xdskit/xds-client";
import { compileRegex, compileRewrite, type Re2Regex, type Re2Rewrite } from "@xdskit/xds-client/internal";
import { xxHash64 } from "./xx-hash64.js";

/** A route hash policy ready to evaluate: the regex and its rewrite compiled (RE2 semantics, linear time). */
export type CompiledHashPolicy =
  | {
      readonly kind: "header";
      /** Lower-case header name. */
      readonly headerName: string;
      /** `regex_rewrite`: every match replaced (RE2 GlobalReplace). */
      readonly rewrite?: { readonly regex: Re2Regex; readonly substitution: Re2Rewrite } | undefined;
      readonly terminal: boolean;
    }
  | { readonly kind: "channel_id"; readonly terminal: boolean };

const compiled = new WeakMap<readonly HashPolicy[], readonly CompiledHashPolicy[]>();

/**
 * The compiled form of a route's hash policies, built on first use and kept for as long as the route's (frozen)
 * list lives, so a call only evaluates. xds-client validated each regex and substitution with the same compile (and
 * cached the compiled regex), so this does not throw for a validated route.
 */
export function compileHashPolicies(policies: readonly HashPolicy[]): readonly CompiledHashPolicy[] {
  let result = compiled.get(policies);
  if (result === undefined) {
    result = Object.freeze(
      policies.map((p): CompiledHashPolicy => {
        if (p.type === "channel_id") return { kind: "channel_id", terminal: p.terminal };
        let rewrite: { regex: Re2Regex; substitution: Re2Rewrite } | undefined;
        if (p.regex !== undefined) {
          const regex = compileRegex(p.regex);
          rewrite = { regex, substitution: compileRewrite(regex, p.regexSubstitution ?? "") };
        }
        return { kind: "header", headerName: p.headerName.toLowerCase(), rewrite, terminal: p.terminal };
      }),
    );
    compiled.set(policies, result);
  }
  return result;
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
  policies: readonly CompiledHashPolicy[],
  headers: Headers,
  channelId: bigint,
): bigint | undefined {
  let hash: bigint | undefined;
  for (const policy of policies) {
    let policyHash: bigint | undefined;
    if (policy.kind === "header") {
      let value = hashHeaderValue(headers, policy.headerName);
      if (value !== undefined) {
        if (policy.rewrite !== undefined) value = policy.rewrite.regex.replaceAll(value, policy.rewrite.substitution);
        policyHash = xxHash64(value);
      }
    } else {
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
