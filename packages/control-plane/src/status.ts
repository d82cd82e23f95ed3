import { create } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { type Status, StatusSchema } from "@xdskit/protos/google/rpc/status_pb";

/** A `google.rpc.Status` as plain data; `code` is a gRPC status code (connect's `Code` enum fits). */
export interface StatusInit {
  readonly code: number;
  readonly message?: string;
  readonly details?: readonly Any[];
}

export function toStatus(init: StatusInit | Status): Status {
  if ("$typeName" in init) return init;
  if (!Number.isInteger(init.code) || init.code < 0 || init.code > 16) {
    throw new RangeError(`status.code must be a gRPC status code (0-16), got ${String(init.code)}`);
  }
  return create(StatusSchema, { code: init.code, message: init.message ?? "", details: [...(init.details ?? [])] });
}
