// TP3 `resource_errors` of a response (A88): each a variant and the status the server gave it, or a NACK line.
import type { ResourceError } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { XdsFeatures } from "../shared/features.js";
import { StatusCode, toStatusCode } from "../shared/xds-error.js";
import type { DecodedResponse } from "./decoded-response.js";
import { readVariantRef } from "./resource-unwrap.js";

/** TP3 `resource_errors` (read when A88 is on); malformed entries become NACK lines. Each counts as invalid (A78). */
export function addResourceErrors(out: DecodedResponse, entries: readonly ResourceError[], features: XdsFeatures) {
  if (!features.dataErrorHandling) return;
  entries.forEach((entry, i) => {
    out.invalid += 1;
    const name = entry.resourceName?.name ?? "";
    const status = entry.errorDetail;
    if (name === "") {
      out.errors.push(`resource_errors[${i}]: resource name is empty`);
      return;
    }
    if (!status || status.code === StatusCode.OK) {
      out.errors.push(`resource_errors[${i}]: ${name}: status is OK`);
      return;
    }
    const ref = readVariantRef(entry.resourceName, features);
    if ("error" in ref) out.errors.push(`resource_errors[${i}]: ${ref.error}`);
    else out.resourceErrors.push({ ...ref, code: toStatusCode(status.code), message: status.message });
  });
}
