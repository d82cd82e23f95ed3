// The key layout (src/keys/resource-key.ts): every resource key round-trips, names with slashes stay one segment,
// constraints are written and read canonical, and keys outside the layout say why.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { markerKey, normalizePrefix, parseResourceKey, prefixRange, resourceKey } from "../src/index.js";

const CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

describe("resource keys", () => {
  it("lays out the default set, variants and node sets", () => {
    expect(resourceKey("/xds", { typeUrl: CLUSTER, name: "echo" })).toBe(
      "/xds/resources/envoy.config.cluster.v3.Cluster/echo",
    );
    expect(resourceKey("/xds/", { typeUrl: CLUSTER, name: "echo", constraints: "version=v2 && env=prod" })).toBe(
      "/xds/resources/envoy.config.cluster.v3.Cluster/echo/env=prod && version=v2",
    );
    expect(resourceKey("xds", { typeUrl: CLUSTER, name: "xdstp://a/c/echo", nodeId: "web/1" })).toBe(
      "/xds/nodes/web%2F1/envoy.config.cluster.v3.Cluster/xdstp:%2F%2Fa%2Fc%2Fecho",
    );
  });

  it("reads back what it writes, for any name, node id and constraints", () => {
    const text = fc.string({ minLength: 1, maxLength: 20, unit: "grapheme" });
    const constraints = fc.constantFrom(
      undefined,
      "env=prod",
      "env=prod && version=v2",
      "exists(canary)",
      "!(env=dev)",
    );
    fc.assert(
      fc.property(text, fc.option(text, { nil: undefined }), constraints, (name, nodeId, variant) => {
        const key = {
          typeUrl: CLUSTER,
          name,
          ...(variant !== undefined ? { constraints: variant } : {}),
          ...(nodeId !== undefined ? { nodeId } : {}),
        };
        const parsed = parseResourceKey("/xds", resourceKey("/xds", key));
        expect(parsed.kind).toBe("resource");
        if (parsed.kind !== "resource") return;
        expect(parsed.key.name).toBe(name);
        expect(parsed.key.nodeId).toBe(nodeId);
        expect(parsed.key.typeUrl).toBe(CLUSTER);
        expect(parsed.key.constraints === undefined).toBe(variant === undefined);
      }),
    );
  });

  it("reads constraints in any form as the canonical text", () => {
    const parsed = parseResourceKey(
      "/xds",
      "/xds/resources/envoy.config.cluster.v3.Cluster/echo/version=v2 && env=prod",
    );
    expect(parsed).toEqual({
      kind: "resource",
      key: { typeUrl: CLUSTER, name: "echo", constraints: "env=prod && version=v2" },
    });
  });

  it("names what is wrong with a key outside the layout", () => {
    const bad = (key: string) => {
      const parsed = parseResourceKey("/xds", key);
      return parsed.kind === "malformed" ? parsed.error : parsed.kind;
    };
    expect(bad("/xds/meta/apply")).toBe("meta");
    expect(bad("/xds/other/x")).toMatch(/expected "resources\/", "nodes\/" or "meta\/"/);
    expect(bad("/xds/resources/envoy.config.cluster.v3.Cluster")).toMatch(/<type>\/<name>/);
    expect(bad("/xds/resources/not a type/echo")).toMatch(/not a message type name/);
    expect(bad("/xds/resources/envoy.config.cluster.v3.Cluster/echo/env=")).toMatch(/bad constraints/);
    expect(bad("/xds/resources/envoy.config.cluster.v3.Cluster/echo/true")).toMatch(/unconstrained variant/);
    expect(bad("/xds/nodes//envoy.config.cluster.v3.Cluster/echo")).toMatch(/no node id/);
    expect(bad("/xds/resources/envoy.config.cluster.v3.Cluster/%E0%A4%A")).toMatch(/badly encoded/);
  });

  it("refuses to make a key of a resource without a name or type", () => {
    expect(() => resourceKey("/xds", { typeUrl: CLUSTER, name: "" })).toThrow(/empty name/);
    expect(() => resourceKey("/xds", { typeUrl: "example.com/Cluster", name: "a" })).toThrow(/type.googleapis.com/);
    expect(() => resourceKey("/xds", { typeUrl: CLUSTER, name: "a", constraints: "env=" })).toThrow(/bad constraints/);
  });

  it("normalizes prefixes and covers exactly the prefix's keys", () => {
    expect(normalizePrefix("/xds/")).toBe("/xds");
    expect(normalizePrefix("xds")).toBe("/xds");
    expect(markerKey("/xds/")).toBe("/xds/meta/apply");
    const { key, rangeEnd } = prefixRange("/xds");
    expect(Buffer.from(key).toString()).toBe("/xds/");
    expect(Buffer.from(rangeEnd).toString()).toBe("/xds0");
  });
});
