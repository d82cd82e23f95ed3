// Delta, a response read as ranges (`DeltaResponseRanges`, docs/architecture.md#the-delta-envelope), its resources
// read in two passes. The first reads every entry (an unreadable one fails the stream before anything is decoded,
// whatever the type), plain ones only as far as where their fields are. The second decodes them. For a type that never
// reads its wrapper (`ResourceType.usesWrapper` false: the built-in types), a plain entry is decoded without the
// `Resource` message, its unwrapped form or a version string of its own: only the `Any` its decoder takes is made,
// its name is the decoder's when the wrapper gives the same one, and entries with equal versions share one string
// and one placement.
// Every other entry is read to its `Resource` and goes the general way (`outcomeOf`). The two ways give the same
// response (test/fuzz/delta-entries.test.ts).
import type { Any } from "@bufbuild/protobuf/wkt";
import { TRUE } from "@xdskit/constraint-matcher";
import type { Resource } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { ExpectedTypeUrls } from "./any-reader.js";
import type { ResponseEntries } from "./decode-memo.js";
import { type DecodedResponse, type DecodeSettings, UNCONSTRAINED } from "./decoded-response.js";
import {
  NAME_END,
  NAME_START,
  plainResourceAt,
  RESOURCE_FIELDS,
  readPlainResourceFields,
  slowReadResource,
  VALUE_END,
  VALUE_START,
  VERSION_END,
  VERSION_START,
} from "./delta-resource.js";
import { addOutcome, namedOutcome, outcomeOf, type Placement, safeDecode } from "./entry-outcome.js";
import { holdsText, latin1Slice } from "./plain-fields.js";
import { unwrapResource } from "./resource-unwrap.js";

/**
 * Where the first pass puts the fields of plain entries, `RESOURCE_FIELDS` numbers each; grown as needed, for the life
 * of the process (one response is read at a time, both passes with nothing in between).
 */
let scratch = new Int32Array(RESOURCE_FIELDS * 1024);

/** A response's entries after the first pass. */
export interface ReadDeltaEntries {
  readonly entries: ResponseEntries;
  readonly typeUrl: string;
  /** The entries that are not plain, read by protobuf-es, by index. */
  readonly others: ReadonlyMap<number, Resource> | undefined;
}

/**
 * The first pass: every entry read, the plain ones as where their fields are, the others by protobuf-es (throws
 * `UnreadableResponseError` for one that does not read). `expected` holds the response's type URL alone.
 */
export function readDeltaEntries(entries: ResponseEntries, expected: ExpectedTypeUrls): ReadDeltaEntries {
  const { memory, starts, ends } = entries;
  const count = starts.length;
  if (scratch.length < count * RESOURCE_FIELDS) scratch = new Int32Array(count * RESOURCE_FIELDS * 2);
  let others: Map<number, Resource> | undefined;
  for (let i = 0; i < count; i++) {
    const start = starts[i]!;
    const end = ends[i]!;
    if (!readPlainResourceFields(memory, start, end, expected, scratch, i * RESOURCE_FIELDS)) {
      others ??= new Map();
      others.set(i, slowReadResource(memory.subarray(start, end)));
    }
  }
  return { entries, typeUrl: expected.urls[0]!, others };
}

/** Whether `bytes[a, a + length)` and `bytes[b, b + length)` hold the same bytes. */
function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/** The second pass: each entry decoded and added to `out`. */
export function addDeltaEntries(out: DecodedResponse, read: ReadDeltaEntries, settings: DecodeSettings): void {
  const { entries, typeUrl, others } = read;
  const { memory, starts } = entries;
  const { type } = out;
  const direct = type.usesWrapper === false;
  const { features, context } = settings;
  // The placement of the last version made (shared by a run of entries of equal versions), and where its bytes are.
  let placed: Placement = { constraints: TRUE, variant: UNCONSTRAINED, version: "" };
  let versionStart = -1;
  let versionLength = 0;
  for (let i = 0; i < starts.length; i++) {
    const at = i * RESOURCE_FIELDS;
    const resource = others?.get(i);
    if (resource !== undefined || !direct || scratch[at + VALUE_START]! < 0) {
      // The general way: a Resource (an entry without an Any is NACKed by `unwrapResource`).
      const wrapper = resource ?? plainResourceAt(memory, scratch, at, typeUrl);
      addOutcome(out, i, outcomeOf(type, unwrapResource(wrapper, typeUrl, features), settings, wrapper.version));
      continue;
    }
    const value = memory.subarray(scratch[at + VALUE_START]!, scratch[at + VALUE_END]!);
    const any: Any = { $typeName: "google.protobuf.Any", typeUrl, value };
    const result = safeDecode(type, any, context);
    const fromVersion = scratch[at + VERSION_START]!;
    const length = fromVersion < 0 ? 0 : scratch[at + VERSION_END]! - fromVersion;
    if (length !== versionLength || !sameBytes(memory, fromVersion, versionStart, length)) {
      const version = length === 0 ? "" : latin1Slice.call(memory, fromVersion, fromVersion + length);
      placed = { constraints: TRUE, variant: UNCONSTRAINED, version };
      versionStart = fromVersion;
      versionLength = length;
    }
    // A wrapper's empty name names nothing (as in `unwrapResource`): the decoder's name is taken.
    const fromName = scratch[at + NAME_START]!;
    const toName = scratch[at + NAME_END]!;
    let name = result.name;
    if (fromName < toName && (name === undefined || !holdsText(memory, fromName, toName, name))) {
      name = latin1Slice.call(memory, fromName, toName);
    }
    addOutcome(out, i, namedOutcome(result, any, name, placed));
  }
}
