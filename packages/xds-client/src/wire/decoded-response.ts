// A response of either ADS protocol, decoded into one protocol-neutral shape, and the decoding both protocols share:
// unwrapping `Resource`, naming a resource and its TP2 variant, decoding it (once per distinct bytes in SotW), reading
// TP3 `resource_errors` and delta removals, and the NACK text. The calls (sotw-call.ts, delta-call.ts) produce a
// DecodedResponse; the cache applies it; the call ACKs or NACKs it.
import { fromBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import { canonicalText, type Expr, fromProto, TRUE } from "@xdskit/constraint-matcher";
import {
  type DynamicParameterConstraints,
  type Resource,
  type ResourceError,
  type ResourceName,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { XdsFeatures } from "../shared/features.js";
import { canonicalName } from "../shared/resource-name.js";
import { errorMessage, StatusCode, toStatusCode } from "../shared/xds-error.js";
import type { HeldVariant } from "../state/resource-state.js";
import { keptText } from "./resource-bytes.js";
import type { DecodeContext, DecodeResult, ResourceType } from "./resource-type.js";

export const RESOURCE_WRAPPER_TYPE_URL = "type.googleapis.com/envoy.service.discovery.v3.Resource";

/** The variant of a resource sent without constraints. */
export const UNCONSTRAINED: HeldVariant = Object.freeze({ key: "" });

/** One resource of a response, decoded and named. */
export interface DecodedResource {
  /** Canonical (`canonicalName`). */
  readonly name: string;
  readonly constraints: Expr;
  readonly variant: HeldVariant;
  /** Whether it decoded and validated: then `value` is the update; else `detail` says why not. */
  readonly ok: boolean;
  readonly value: unknown;
  readonly detail: string | undefined;
  /**
   * The value of the resource's `Any` as received (wrapper removed), one character per byte (resource-bytes.ts); its
   * type URL is the response's.
   */
  readonly bytes: string;
  /** Delta: the resource's own version. */
  readonly version: string | undefined;
}

/** A removal (delta) or a TP3 error: a name, and the variant it is about. */
export interface VariantRef {
  readonly name: string;
  readonly constraints: Expr;
  readonly variant: HeldVariant;
}

export interface DecodedResourceError extends VariantRef {
  readonly code: StatusCode;
  readonly message: string;
}

export interface DecodedResponse {
  readonly typeUrl: string;
  readonly type: ResourceType<unknown>;
  /** SotW `version_info`; delta `system_version_info`. */
  readonly version: string;
  readonly nonce: string;
  /** SotW: the response lists the whole state of the type (an omitted LDS/CDS resource is deleted). */
  readonly stateOfTheWorld: boolean;
  readonly resources: DecodedResource[];
  readonly removals: VariantRef[];
  readonly resourceErrors: DecodedResourceError[];
  /** Every problem found, one line each of the NACK; empty: the response is ACKed. */
  readonly errors: string[];
  /** A78 validity counts: resources that decoded, and those that did not (TP3 errors included). */
  valid: number;
  invalid: number;
}

export function emptyResponse(
  typeUrl: string,
  type: ResourceType<unknown>,
  version: string,
  nonce: string,
  stateOfTheWorld: boolean,
): DecodedResponse {
  return {
    typeUrl,
    type,
    version,
    nonce,
    stateOfTheWorld,
    resources: [],
    removals: [],
    resourceErrors: [],
    errors: [],
    valid: 0,
    invalid: 0,
  };
}

/** What decoding depends on besides the bytes. */
export interface DecodeSettings {
  readonly features: XdsFeatures;
  readonly context: DecodeContext;
}

/** A resource taken out of its `Resource` wrapper, or why it cannot be. */
export type Unwrapped =
  | {
      readonly any: Any;
      readonly name?: string;
      readonly constraints: Expr;
      readonly variant: HeldVariant;
      /** The wrapper it came in, for the decoder (`DecodeContext.wrapper`). */
      readonly wrapper?: Resource;
    }
  | { readonly error: string };

/** The constraints of a variant (TRUE for none, or when A67 is off). Throws ConstraintError when malformed. */
function readConstraints(message: DynamicParameterConstraints | undefined, features: XdsFeatures): Expr {
  if (message === undefined || !features.dynamicParameters) return TRUE;
  return fromProto(message, { path: "resource_name.dynamic_parameter_constraints" });
}

function variantOf(constraints: Expr, resourceName: ResourceName | undefined): HeldVariant {
  if (constraints.kind === "true" || resourceName === undefined) return UNCONSTRAINED;
  return Object.freeze({ key: canonicalText(constraints), resourceName });
}

/** A `Resource` (a SotW wrapper or a delta resource) whose payload must be of `typeUrl`. */
export function unwrapResource(wrapper: Resource, typeUrl: string, features: XdsFeatures): Unwrapped {
  const inner = wrapper.resource;
  if (!inner) return { error: "the Resource holds no resource" };
  if (inner.typeUrl !== typeUrl) return { error: `type URL ${inner.typeUrl} does not match the response's ${typeUrl}` };
  // A67: with dynamic parameters on, `resource_name` (when set) names the resource and carries its constraints;
  // off, it is ignored and `name` names the resource.
  const resourceName = features.dynamicParameters ? wrapper.resourceName : undefined;
  if (resourceName !== undefined && resourceName.name !== "") {
    try {
      const constraints = readConstraints(resourceName.dynamicParameterConstraints, features);
      return {
        any: inner,
        name: resourceName.name,
        constraints,
        variant: variantOf(constraints, resourceName),
        wrapper,
      };
    } catch (error) {
      return { error: `${resourceName.name}: ${errorMessage(error)}` };
    }
  }
  return wrapper.name === ""
    ? { any: inner, constraints: TRUE, variant: UNCONSTRAINED, wrapper }
    : { any: inner, name: wrapper.name, constraints: TRUE, variant: UNCONSTRAINED, wrapper };
}

/** A SotW entry: a resource of `typeUrl`, or one wrapped in `Resource`. */
export function unwrapAny(any: Any, typeUrl: string, features: XdsFeatures): Unwrapped {
  if (any.typeUrl !== RESOURCE_WRAPPER_TYPE_URL) {
    if (any.typeUrl !== typeUrl) return { error: `type URL ${any.typeUrl} does not match the response's ${typeUrl}` };
    return { any, constraints: TRUE, variant: UNCONSTRAINED };
  }
  let wrapper: Resource;
  try {
    wrapper = fromBinary(ResourceSchema, any.value);
  } catch (error) {
    return { error: `cannot decode the Resource wrapper: ${errorMessage(error)}` };
  }
  return unwrapResource(wrapper, typeUrl, features);
}

/**
 * A response that cannot be read, as the transport reports one it cannot parse: the stream fails with INTERNAL and
 * `parse binary: …` (docs/architecture.md#the-byte-identical-skip).
 */
export class UnreadableResponseError extends Error {
  readonly code = StatusCode.INTERNAL;
  readonly rawMessage: string;
  constructor(cause: unknown) {
    const rawMessage = `parse binary: ${errorMessage(cause)}`;
    super(rawMessage);
    this.rawMessage = rawMessage;
  }
}

/** Type URLs an entry may have, as strings and as their UTF-8 bytes (`expectTypeUrls`). */
export interface ExpectedTypeUrls {
  readonly urls: readonly string[];
  readonly encoded: readonly Uint8Array[];
}

/** What `readAny` compares an entry's type URL with, worked out once per response. */
export function expectTypeUrls(...urls: string[]): ExpectedTypeUrls {
  const encoder = new TextEncoder();
  return { urls, encoded: urls.map((url) => encoder.encode(url)) };
}

/** Whether `bytes` holds `url` at `pos`. */
function holds(bytes: Uint8Array, pos: number, url: Uint8Array): boolean {
  for (let i = 0; i < url.length; i++) if (bytes[pos + i] !== url[i]) return false;
  return true;
}

/**
 * An Any encoded the way every server encodes one (its `type_url`, one of `expected`, then its `value`, each once,
 * lengths below 2^28), read without protobuf-es: the message `fromBinary` reads from such bytes, with the type URL
 * string shared by every entry. Undefined for any other encoding.
 */
export function readPlainAny(bytes: Uint8Array, expected: ExpectedTypeUrls): Any | undefined {
  return readPlainAnyIn(bytes, 0, bytes.length, expected);
}

/** `readPlainAny` of the Any that is `bytes[start, end)` (no view made of it: its value is the one view). */
export function readPlainAnyIn(
  bytes: Uint8Array,
  start: number,
  end: number,
  expected: ExpectedTypeUrls,
): Any | undefined {
  const urlLength = bytes[start + 1]!;
  if (end - start < 2 || bytes[start] !== 0x0a || urlLength >= 0x80) return undefined;
  let typeUrl: string | undefined;
  for (let i = 0; i < expected.urls.length; i++) {
    const url = expected.encoded[i]!;
    if (url.length === urlLength && holds(bytes, start + 2, url)) typeUrl = expected.urls[i];
  }
  let pos = start + 2 + urlLength;
  if (typeUrl === undefined || pos >= end || bytes[pos] !== 0x12) return undefined;
  pos += 1;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = pos < end ? bytes[pos++] : undefined;
    if (byte === undefined || shift === 28) return undefined;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  if (pos + length !== end) return undefined;
  return { $typeName: "google.protobuf.Any", typeUrl, value: bytes.subarray(pos, end) };
}

/**
 * A SotW entry's bytes as the `google.protobuf.Any` they encode, read as protobuf-es reads it inside the envelope: the
 * same checks (tags, bounds, UTF-8 of `type_url`) and the same recursion budget (the envelope is one level up). A
 * failure fails the whole response, as it did when the envelope was read with `Any` resources. An entry of an
 * `expected` type URL encoded as servers encode it is read directly (`readPlainAny`), to the same message.
 */
export function readAny(bytes: Uint8Array, expected?: ExpectedTypeUrls): Any {
  const plain = expected === undefined ? undefined : readPlainAny(bytes, expected);
  if (plain !== undefined) return plain;
  try {
    return fromBinary(AnySchema, bytes, { recursionLimit: 99 });
  } catch (error) {
    throw new UnreadableResponseError(error);
  }
}

/** Decodes and validates, turning a throwing decoder into a failure (decoders should not throw, but may). */
function safeDecode(type: ResourceType<unknown>, any: Any, context: DecodeContext): DecodeResult<unknown> {
  try {
    return type.decode(any, context);
  } catch (error) {
    return { ok: false, error: `decoder failed: ${errorMessage(error)}` };
  }
}

/** What one entry of a response gave, its index aside: the resource to apply (when it can be named) and its problem. */
export interface EntryOutcome {
  readonly resource: DecodedResource | undefined;
  readonly ok: boolean;
  /** The NACK line, without its `resource index N: ` prefix; undefined when ok. */
  readonly error: string | undefined;
}

/**
 * An entry that names a resource: the resource (itself, for `EntryOutcome`) and what its decoding gave. One object per
 * distinct entry, kept by the byte-identical skip while the entry is sent again.
 */
class NamedOutcome implements DecodedResource, EntryOutcome {
  constructor(
    readonly name: string,
    readonly value: unknown,
    /** Why it is invalid (the decoder's text), and its NACK line (the name as sent, then the text); none if valid. */
    private readonly failure: { readonly detail: string; readonly error: string } | undefined,
    readonly bytes: string,
    /** Its constraints, variant and version: `PLAIN` (shared) for most. The skip keeps one of these per entry. */
    private readonly placed: Placement,
  ) {}

  get resource(): DecodedResource {
    return this;
  }

  get ok(): boolean {
    return this.failure === undefined;
  }

  get constraints(): Expr {
    return this.placed.constraints;
  }

  get variant(): HeldVariant {
    return this.placed.variant;
  }

  get version(): string | undefined {
    return this.placed.version;
  }

  get detail(): string | undefined {
    return this.failure?.detail;
  }

  get error(): string | undefined {
    return this.failure?.error;
  }
}

interface Placement {
  readonly constraints: Expr;
  readonly variant: HeldVariant;
  readonly version: string | undefined;
}

/** An unconstrained resource without a version of its own (every SotW resource without TP2 constraints). */
const PLAIN: Placement = Object.freeze({ constraints: TRUE, variant: UNCONSTRAINED, version: undefined });

/**
 * Decodes an entry: named by its wrapper, else by what the decoder read. A failure is a NACK line; a resource nobody
 * can name reaches no watcher.
 */
export function outcomeOf(
  type: ResourceType<unknown>,
  unwrapped: Unwrapped,
  settings: DecodeSettings,
  version?: string,
): EntryOutcome {
  if ("error" in unwrapped) return { resource: undefined, ok: false, error: unwrapped.error };
  const any = unwrapped.any;
  // Spelled out, not spread: a spread with one more key cost more than the decoding of a small resource.
  const shared = settings.context;
  const context: DecodeContext = unwrapped.wrapper
    ? { server: shared.server, bootstrap: shared.bootstrap, features: shared.features, wrapper: unwrapped.wrapper }
    : shared;
  const result = safeDecode(type, any, context);
  const name = unwrapped.name ?? result.name;
  if (name === undefined) return { resource: undefined, ok: result.ok, error: result.ok ? undefined : result.error };
  const { constraints, variant } = unwrapped;
  const bytes = keptText(any.value);
  const failure = result.ok ? undefined : { detail: result.error, error: `${name}: ${result.error}` };
  const value = result.ok ? result.value : undefined;
  const placed =
    constraints === TRUE && variant === UNCONSTRAINED && version === undefined
      ? PLAIN
      : { constraints, variant, version };
  return new NamedOutcome(canonicalName(name), value, failure, bytes, placed);
}

/** Adds the `index`th entry of a response to `out`: counted valid or invalid, its NACK line, its resource. */
export function addOutcome(out: DecodedResponse, index: number, outcome: EntryOutcome): void {
  if (outcome.ok) out.valid += 1;
  else {
    out.invalid += 1;
    out.errors.push(`resource index ${index}: ${outcome.error}`);
  }
  if (outcome.resource !== undefined) out.resources.push(outcome.resource);
}

/** A variant named by a `ResourceName` (a removal, an error), or the NACK line saying why it cannot be read. */
export function readVariantRef(
  resourceName: ResourceName | undefined,
  features: XdsFeatures,
): VariantRef | { readonly error: string } {
  const name = resourceName?.name ?? "";
  try {
    const constraints = readConstraints(resourceName?.dynamicParameterConstraints, features);
    return { name: canonicalName(name), constraints, variant: variantOf(constraints, resourceName) };
  } catch (error) {
    return { error: `${name}: ${errorMessage(error)}` };
  }
}

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

/** Envoy's bound on a NACK's `error_detail` message (docs/decisions.md#nack-detail-bound). */
export const MAX_NACK_DETAIL_BYTES = 4096;

/** The NACK text: the problems of the response, bounded to MAX_NACK_DETAIL_BYTES, and the node ID. */
export function nackDetail(errors: readonly string[], nodeId: string): string {
  const head = "xDS response validation errors: [";
  const tail = `] (node ID: ${nodeId})`;
  const full = `${head}${errors.join("; ")}${tail}`;
  if (Buffer.byteLength(full) <= MAX_NACK_DETAIL_BYTES) return full;
  // Room for the listed errors, keeping space for the longest possible "; … N more errors".
  const more = (n: number) => `; … ${n} more errors`;
  const budget = MAX_NACK_DETAIL_BYTES - Buffer.byteLength(head + tail + more(errors.length));
  const listed: string[] = [];
  let used = 0;
  for (const error of errors) {
    const size = Buffer.byteLength(error) + (listed.length > 0 ? 2 : 0);
    if (used + size > budget) break;
    listed.push(error);
    used += size;
  }
  if (listed.length === 0) {
    // Not even the first fits: keep its beginning (cut on a character boundary).
    const first = errors[0] ?? "";
    let cut = Buffer.from(first)
      .subarray(0, Math.max(0, budget - 3))
      .toString();
    if (cut.endsWith("\uFFFD")) cut = cut.slice(0, -1);
    listed.push(`${cut}…`);
  }
  return `${head}${listed.join("; ")}${more(errors.length - listed.length)}${tail}`;
}
