import { type Message, toBinary, type UnknownField } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import { type Resource, ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

/** A message encoded as the value of a length-delimited field (length prefix included), once per message. */
const encodedFields = new WeakMap<Message, Uint8Array>();

function encodedField(message: Any | Resource): Uint8Array {
  let encoded = encodedFields.get(message);
  if (!encoded) {
    const bytes =
      message.$typeName === AnySchema.typeName
        ? toBinary(AnySchema, message as Any)
        : toBinary(ResourceSchema, message as Resource);
    encoded = new BinaryWriter().bytes(bytes).finish();
    encodedFields.set(message, encoded);
  }
  return encoded;
}

/**
 * A copy of `message` for the wire whose repeated message field `fieldNo` (left empty in `message`) is written from
 * bytes encoded once per item, carried as an unknown field. A parser reads the same field; a server fanning one
 * large state out to many streams does not re-encode every resource for every stream. Hooks see the plain message.
 */
export function withPreEncodedField<T extends Message>(
  message: T,
  fieldNo: number,
  items: readonly (Any | Resource)[],
): T {
  if (items.length === 0) return message;
  // One unknown field whose data runs on through the following fields: the writer puts the first tag, each later
  // item brings its own. A single buffer instead of one object per resource.
  const tag = new BinaryWriter().tag(fieldNo, WireType.LengthDelimited).finish();
  const parts = items.map(encodedField);
  let size = 0;
  for (const part of parts) size += part.length;
  const data = new Uint8Array(size + tag.length * (parts.length - 1));
  let offset = 0;
  parts.forEach((part, i) => {
    if (i > 0) {
      data.set(tag, offset);
      offset += tag.length;
    }
    data.set(part, offset);
    offset += part.length;
  });
  const unknown: UnknownField[] = [{ no: fieldNo, wireType: WireType.LengthDelimited, data }];
  return { ...message, $unknown: unknown };
}
