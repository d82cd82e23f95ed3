// Shared fixtures for the resource-type tests: a DecodeContext and helpers that pack messages into Any.
import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { expect } from "vitest";
import type { Bootstrap, XdsServerConfig } from "../../src/bootstrap/bootstrap-types.js";
import { resolveFeatures, type XdsFeatures } from "../../src/shared/features.js";
import type { DecodeContext, DecodeResult, ResourceType } from "../../src/wire/resource-type.js";

export const server: XdsServerConfig = Object.freeze<XdsServerConfig>({
  serverUri: "xds.example.com:443",
  channelCredentials: { type: "insecure" },
  serverFeatures: [],
  apiType: "GRPC",
  ignoreResourceDeletion: false,
  failOnDataErrors: false,
  resourceTimerIsTransientError: false,
  trustedXdsServer: false,
  key: "xds.example.com:443|insecure",
});

export const bootstrap: Bootstrap = Object.freeze<Bootstrap>({
  xdsServers: [server],
  node: { id: "node-1", cluster: "c", userAgentName: "xdskit", userAgentVersion: "0.0.0" },
  authorities: new Map(),
  dynamicParameters: {},
  clientDefaultListenerResourceNameTemplate: "%s",
  certificateProviders: new Map([
    ["ca_provider", { pluginName: "file_watcher", config: {}, fileWatcher: { refreshIntervalMs: 600_000 } }],
    ["id_provider", { pluginName: "file_watcher", config: {}, fileWatcher: { refreshIntervalMs: 600_000 } }],
  ]),
});

export function contextWith(overrides: { features?: Partial<XdsFeatures>; server?: Partial<XdsServerConfig> } = {}) {
  return Object.freeze({
    server: { ...server, ...overrides.server },
    bootstrap,
    features: resolveFeatures(overrides.features ?? {}, {}),
  }) satisfies DecodeContext;
}

export const context: DecodeContext = contextWith();

/** The plain-object init form of a message (spreadable, unlike MessageInitShape's union with the message). */
export type Init<Desc extends DescMessage> = Exclude<MessageInitShape<Desc>, MessageShape<Desc>>;

/** Packs `init` as an Any of `schema`. */
export function pack<Desc extends DescMessage>(schema: Desc, init: MessageInitShape<Desc>): Any {
  return anyPack(schema, create(schema, init));
}

/** Decodes `init` (a message of `schema`) with `type`. */
export function decodeWith<T, Desc extends DescMessage>(
  type: ResourceType<T>,
  schema: Desc,
  init: MessageInitShape<Desc>,
  ctx: DecodeContext = context,
): DecodeResult<T> {
  return type.decode(pack(schema, init), ctx);
}

/** Asserts success and returns the update. */
export function expectOk<T>(result: DecodeResult<T>): T {
  if (!result.ok) expect.fail(`expected success, got: ${result.error}`);
  return result.value;
}

/** Asserts failure with exactly `error` and, when given, the resource name. */
export function expectError<T>(result: DecodeResult<T>, error: string, name?: string): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error).toBe(error);
  if (name !== undefined) expect(result.name).toBe(name);
}

/** True when `value` and everything reachable from it (typed arrays aside) is frozen. */
export function isDeeplyFrozen(value: unknown, seen = new Set<unknown>()): boolean {
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value) || seen.has(value)) return true;
  seen.add(value);
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every((child) => isDeeplyFrozen(child, seen));
}
