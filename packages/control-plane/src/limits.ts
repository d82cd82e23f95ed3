import type { JsonValue } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";

/**
 * What one client may make the server hold or do. Each limit has a default; a stream that goes past one is ended
 * with the status named here and a message naming the limit, and the server carries on serving the others. The
 * README's "Limits" section lists them for users.
 */
export interface ServerLimits {
  /** The largest request message, after decompression. RESOURCE_EXHAUSTED. */
  readonly maxRequestBytes: number;
  /**
   * Bytes a stream may have waiting for the connection (written, not yet taken: a client that does not read). A
   * response that would take a stream past it, while earlier ones still wait, ends the stream with
   * RESOURCE_EXHAUSTED (an HTTP/2 reset, as the status cannot get past what the client does not read).
   */
  readonly maxQueuedBytesPerStream: number;
  /** Distinct type URLs one stream may use. RESOURCE_EXHAUSTED. */
  readonly maxTypesPerStream: number;
  /** Names one stream may subscribe to in one type (one SotW request, or a delta subscription in all). RESOURCE_EXHAUSTED. */
  readonly maxResourceNamesPerType: number;
  /** UTF-8 bytes of one resource name or type URL (and of one locator's dynamic parameters). RESOURCE_EXHAUSTED. */
  readonly maxResourceNameBytes: number;
  /** How deeply the Struct values of a node's metadata may nest (`{}` is 1). RESOURCE_EXHAUSTED. */
  readonly maxNodeMetadataDepth: number;
}

export const DEFAULT_LIMITS: ServerLimits = Object.freeze({
  maxRequestBytes: 16 * 1024 * 1024,
  maxQueuedBytesPerStream: 16 * 1024 * 1024,
  maxTypesPerStream: 64,
  maxResourceNamesPerType: 50_000,
  maxResourceNameBytes: 8 * 1024,
  maxNodeMetadataDepth: 32,
});

/** The limits with the options' overrides, each checked to be a positive integer. */
export function resolveLimits(overrides: Partial<ServerLimits>): ServerLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ServerLimits)[]) {
    const value = overrides[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`${key} must be a positive integer, got ${String(value)}`);
    limits[key] = value;
  }
  return limits;
}

/** A request the server refuses: the stream ends with `code` (INVALID_ARGUMENT by default). */
export class InvalidRequestError extends Error {
  override readonly name = "InvalidRequestError";
  readonly code: number;

  constructor(message: string, code: number = Code.InvalidArgument) {
    super(message);
    this.code = code;
  }
}

function exhausted(message: string): InvalidRequestError {
  return new InvalidRequestError(message, Code.ResourceExhausted);
}

/** UTF-8 length of `s` above `max`, without encoding it when its length alone decides. */
function tooLong(s: string, max: number): boolean {
  if (s.length > max) return true;
  if (s.length * 3 <= max) return false;
  return Buffer.byteLength(s, "utf8") > max;
}

export function checkTypeUrl(limits: ServerLimits, typeUrl: string, what: string): void {
  if (typeUrl === "") throw new InvalidRequestError(`${what} without type_url`);
  if (tooLong(typeUrl, limits.maxResourceNameBytes)) {
    throw exhausted(`${what} has a type_url longer than maxResourceNameBytes (${limits.maxResourceNameBytes} bytes)`);
  }
}

/** Names in one request: none empty, none too long, not too many (`count`: all a request names, or the total after it). */
export function checkNames(limits: ServerLimits, what: string, names: readonly string[], count = names.length): void {
  if (count > limits.maxResourceNamesPerType) {
    throw exhausted(
      `${what} names ${count} resources, more than maxResourceNamesPerType (${limits.maxResourceNamesPerType})`,
    );
  }
  for (const name of names) {
    if (name === "") throw new InvalidRequestError(`${what} names an empty resource`);
    if (tooLong(name, limits.maxResourceNameBytes)) {
      throw exhausted(
        `${what} names a resource longer than maxResourceNameBytes (${limits.maxResourceNameBytes} bytes)`,
      );
    }
  }
}

/**
 * The dynamic parameters of `resource_locators`: the keys and values of one locator count, in UTF-8 bytes, against
 * maxResourceNameBytes, as its name does.
 */
export function checkLocators(
  limits: ServerLimits,
  what: string,
  locators: readonly { readonly dynamicParameters: Readonly<Record<string, string>> }[],
): void {
  for (const locator of locators) {
    let bytes = 0;
    for (const [key, value] of Object.entries(locator.dynamicParameters)) {
      bytes += Buffer.byteLength(key, "utf8") + Buffer.byteLength(value, "utf8");
    }
    if (bytes > limits.maxResourceNameBytes) {
      throw exhausted(
        `${what} has a resource locator whose dynamic parameters are longer than maxResourceNameBytes (${limits.maxResourceNameBytes} bytes)`,
      );
    }
  }
}

function depthOf(value: JsonValue | undefined): number {
  if (value === null || typeof value !== "object") return 0;
  let deepest = 0;
  for (const child of Array.isArray(value) ? value : Object.values(value)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}

/** The Struct metadata a node carries: its own, its build version's, its extensions'. */
export function checkNode(limits: ServerLimits, node: Node): void {
  const structs = [node.metadata];
  if (node.userAgentVersionType.case === "userAgentBuildVersion")
    structs.push(node.userAgentVersionType.value.metadata);
  for (const extension of node.extensions) structs.push(extension.version?.metadata);
  for (const struct of structs) {
    const depth = depthOf(struct);
    if (depth > limits.maxNodeMetadataDepth) {
      throw exhausted(
        `node metadata nests ${depth} levels, more than maxNodeMetadataDepth (${limits.maxNodeMetadataDepth})`,
      );
    }
  }
}

/** A request that protobuf-es cannot decode: nesting past its recursion limit is a limit, the rest is garbage. */
export function undecodable(what: string, error: unknown, limits: ServerLimits): InvalidRequestError {
  const message = error instanceof Error ? error.message : String(error);
  if (/maximum recursion depth/.test(message)) {
    return exhausted(
      `${what} nests messages too deeply to decode (node metadata may nest maxNodeMetadataDepth = ${limits.maxNodeMetadataDepth} levels)`,
    );
  }
  return new InvalidRequestError(`unreadable request: ${message}`);
}
