// A route's `hash_policy` list (A42): the request hash ring_hash picks with. xds-client keeps only `header` and
// `filter_state` with key `io.grpc.channel_id` (every other kind produces no hash, never an error, as A42 says).
// See docs/decisions.md#policies-ring-hash.

import type { HashPolicy } from "@xdskit/xds-client";
import { xxHash64 } from "./xx-hash64.js";

/** A route hash policy ready to evaluate: the regex compiled, the substitution in String.replace form. */
export type CompiledHashPolicy =
  | {
      readonly kind: "header";
      /** Lower-case header name. */
      readonly headerName: string;
      /** `regex_rewrite`: every match replaced (RE2 GlobalReplace). */
      readonly rewrite?: { readonly pattern: RegExp; readonly substitution: string } | undefined;
      readonly terminal: boolean;
    }
  | { readonly kind: "channel_id"; readonly terminal: boolean };

const compiled = new WeakMap<readonly HashPolicy[], readonly CompiledHashPolicy[]>();

/**
 * The compiled form of a route's hash policies, built on first use and kept for as long as the route's (frozen)
 * list lives, so a call only evaluates. xds-client has already checked each regex with its RE2 rules.
 */
export function compileHashPolicies(policies: readonly HashPolicy[]): readonly CompiledHashPolicy[] {
  let result = compiled.get(policies);
  if (result === undefined) {
    result = Object.freeze(
      policies.map((p): CompiledHashPolicy => {
        if (p.type === "channel_id") return { kind: "channel_id", terminal: p.terminal };
        const rewrite =
          p.regex === undefined
            ? undefined
            : {
                pattern: new RegExp(p.regex.replaceAll("(?P<", "(?<"), "g"),
                substitution: re2SubstitutionToJs(p.regexSubstitution ?? ""),
              };
        return { kind: "header", headerName: p.headerName.toLowerCase(), rewrite, terminal: p.terminal };
      }),
    );
    compiled.set(policies, result);
  }
  return result;
}

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
        if (policy.rewrite !== undefined) value = value.replace(policy.rewrite.pattern, policy.rewrite.substitution);
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
