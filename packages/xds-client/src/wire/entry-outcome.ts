// What one entry of a response gives: decoded with its type (a throwing decoder is a failure), named by its wrapper
// or by what the decoder read, and added to the response as a resource, a valid or invalid count and a NACK line.
import type { Any } from "@bufbuild/protobuf/wkt";
import { type Expr, TRUE } from "@xdskit/constraint-matcher";
import { canonicalName } from "../shared/resource-name.js";
import { errorMessage } from "../shared/xds-error.js";
import type { HeldVariant } from "../state/resource-state.js";
import { type DecodedResource, type DecodedResponse, type DecodeSettings, UNCONSTRAINED } from "./decoded-response.js";
import { keptText } from "./resource-bytes.js";
import type { DecodeContext, DecodeResult, ResourceType } from "./resource-type.js";
import type { Unwrapped } from "./resource-unwrap.js";

/** Decodes and validates, turning a throwing decoder into a failure (decoders should not throw, but may). */
export function safeDecode(type: ResourceType<unknown>, any: Any, context: DecodeContext): DecodeResult<unknown> {
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

/** Where an entry's resource goes: its constraints and variant, and its version (delta). */
export interface Placement {
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
  const { constraints, variant } = unwrapped;
  const placed =
    constraints === TRUE && variant === UNCONSTRAINED && version === undefined
      ? PLAIN
      : { constraints, variant, version };
  return namedOutcome(result, any, unwrapped.name ?? result.name, placed);
}

/**
 * What an entry gave once decoded (`result`, from `any`): named `name` (its wrapper's name, else what the decoder
 * read); a resource nobody can name reaches no watcher.
 */
export function namedOutcome(
  result: DecodeResult<unknown>,
  any: Any,
  name: string | undefined,
  placed: Placement,
): EntryOutcome {
  if (name === undefined) return { resource: undefined, ok: result.ok, error: result.ok ? undefined : result.error };
  const bytes = keptText(any.value);
  const failure = result.ok ? undefined : { detail: result.error, error: `${name}: ${result.error}` };
  const value = result.ok ? result.value : undefined;
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
