import { createHash } from "node:crypto";
import type { Any } from "@bufbuild/protobuf/wkt";

/**
 * A resource's version worked out from what it is, so that two servers (replicas, relays) holding the same bytes
 * give it the same version and a delta client that reconnects elsewhere with `initial_resource_versions` is sent
 * nothing that did not change (docs/decisions.md#content-versions). SHA-256 of the packed resource (type URL and
 * bytes) and whether it may be cached, cut to 52 bits, plus one: a decimal of at most 16 digits, never 0, which is
 * what this server reads back from a client as one of its versions (held-state.ts `parseVersion`).
 */
export function contentVersion(any: Any, doNotCache = false): number {
  const hash = createHash("sha256");
  const typeUrl = Buffer.from(any.typeUrl);
  hash.update(`${typeUrl.length}:${doNotCache ? "n" : "c"}:`);
  hash.update(typeUrl);
  hash.update(any.value);
  const digest = hash.digest();
  return digest.readUIntBE(0, 6) * 16 + (digest[6]! >> 4) + 1;
}
