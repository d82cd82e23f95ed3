// A41's RBAC filter on the server over real HTTP/2, plaintext (the mTLS principals are in tls.test.ts): policies on
// headers, paths, source and destination; RBACPerRoute overrides per route and per virtual host; a denial is
// PERMISSION_DENIED in the call's protocol (Trailers-Only for gRPC) and never reaches the service; RBAC's LOG action
// is NACKed and the last good configuration stays.
import { constants as h2, connect as http2Connect } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import type { ManagementServer } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoClient } from "./support/echo-service.js";
import {
  plaintextTransport,
  type StartedServer,
  serverBootstrap,
  serving,
  startControlPlane,
  startServer,
} from "./support/harness.js";
import {
  type ChainInit,
  nonForwardingRoute,
  type PolicyInit,
  rbacFilter,
  rbacPerRoute,
  rbacRules,
  serverListener,
  serverRoutes,
} from "./support/server-listener.js";

const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
const UNARY = "/xdskit.test.Echo/Unary";

const anyPermission = { rule: { case: "any" as const, value: true } };
const anyPrincipal = { identifier: { case: "any" as const, value: true } };

function headerRegex(name: string, regex: string) {
  return {
    name,
    headerMatchSpecifier: {
      case: "stringMatch" as const,
      value: { matchPattern: { case: "safeRegex" as const, value: { regex } } },
    },
  };
}

const denyBadUser: Record<string, PolicyInit> = {
  "bad-user": {
    permissions: [anyPermission],
    principals: [{ identifier: { case: "header", value: headerRegex("x-user", "ba.*") } }],
  },
};

/** The gRPC status code of a unary call, or "OK". */
async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "OK";
  } catch (error) {
    const e = ConnectError.from(error);
    return Code[e.code] ?? "?";
  }
}

describe("RBAC (A41)", () => {
  let controlPlane: ManagementServer;
  let started: StartedServer | undefined;
  let client: XdsClient | undefined;

  beforeEach(async () => {
    controlPlane = await startControlPlane();
  });
  afterEach(async () => {
    await started?.server.close();
    started = undefined;
    await client?.close();
    client = undefined;
    await controlPlane.close();
  });

  async function serve(chain: ChainInit, host = "127.0.0.1") {
    started = await startServer(controlPlane, { host, ...(client === undefined ? {} : { client }) });
    const { name, port } = started;
    controlPlane.setResource(serverListener({ name, host, port, filterChains: [chain] }));
    await started.statuses.until(serving);
    return started;
  }

  it("denies a call a DENY policy matches (a header regex), PERMISSION_DENIED before the service", async () => {
    const { host, port, echo } = await serve({ httpFilters: [rbacFilter(rbacRules("DENY", denyBadUser))] });
    const calls = echoClient(plaintextTransport(host, port).transport);
    const denied = await calls
      .unary({ value: "x" }, { headers: { "x-user": "bart" } })
      .catch((e) => ConnectError.from(e));
    expect(denied).toBeInstanceOf(ConnectError);
    expect((denied as ConnectError).code).toBe(Code.PermissionDenied);
    expect((denied as ConnectError).rawMessage).toBe(`incoming RPC matched a deny policy "bad-user"`);
    expect(echo.calls.get("Unary")).toBeUndefined();
    expect(await calls.unary({ value: "x" }, { headers: { "x-user": "lisa" } })).toMatchObject({ value: "echo:x" });
    expect(await calls.unary({ value: "y" })).toMatchObject({ value: "echo:y" });
    expect(echo.calls.get("Unary")).toBe(2);
  });

  it("allows only what an ALLOW policy matches: a path and a source address", async () => {
    const allow = rbacRules("ALLOW", {
      "unary-from-1": {
        permissions: [
          {
            rule: {
              case: "urlPath",
              value: { rule: { case: "path", value: { matchPattern: { case: "exact", value: UNARY } } } },
            },
          },
        ],
        principals: [{ identifier: { case: "directRemoteIp", value: { addressPrefix: "127.0.0.1", prefixLen: 32 } } }],
      },
    });
    const { port } = await serve({ httpFilters: [rbacFilter(allow)] }, "0.0.0.0");
    const from1 = echoClient(plaintextTransport("127.0.0.1", port, { localAddress: "127.0.0.1" }).transport);
    const from2 = echoClient(plaintextTransport("127.0.0.1", port, { localAddress: "127.0.0.2" }).transport);
    expect(await codeOf(from1.unary({ value: "a" }))).toBe("OK");
    expect(await codeOf(from1.held({ value: "b" }))).toBe("PermissionDenied");
    expect(await codeOf(from2.unary({ value: "c" }))).toBe("PermissionDenied");
  });

  it("matches destination_port against the local port", async () => {
    started = await startServer(controlPlane);
    const { name, host, port } = started;
    const rules = (p: number) =>
      rbacRules("ALLOW", {
        port: { permissions: [{ rule: { case: "destinationPort", value: p } }], principals: [anyPrincipal] },
      });
    controlPlane.setResource(
      serverListener({ name, host, port, filterChains: [{ httpFilters: [rbacFilter(rules(port))] }] }),
    );
    await started.statuses.until(serving);
    expect(await codeOf(echoClient(plaintextTransport(host, port).transport).unary({ value: "p" }))).toBe("OK");
    controlPlane.setResource(
      serverListener({ name, host, port, filterChains: [{ httpFilters: [rbacFilter(rules(port + 1))] }] }),
    );
    let code = "OK";
    for (let attempt = 0; attempt < 200 && code !== "PermissionDenied"; attempt++) {
      code = await codeOf(echoClient(plaintextTransport(host, port).transport).unary({ value: "p" }));
    }
    expect(code).toBe("PermissionDenied");
  });

  it("takes a route's RBACPerRoute over the virtual host's, and the virtual host's over the Listener's", async () => {
    // Listener: deny everything (ALLOW without policies). Virtual host: allow every call with x-vip: yes. Route for
    // Unary: no rules at all (everything allowed). Held matches the catch-all route, which has no override.
    const denyAll = rbacRules("ALLOW", {});
    const vipOnly = rbacRules("ALLOW", {
      vip: {
        permissions: [anyPermission],
        principals: [{ identifier: { case: "header", value: headerRegex("x-vip", "yes") } }],
      },
    });
    const routes = serverRoutes(
      "overrides",
      [nonForwardingRoute(UNARY, { typedPerFilterConfig: { rbac: rbacPerRoute() } }), nonForwardingRoute()],
      { typedPerFilterConfig: { rbac: rbacPerRoute(vipOnly) } },
    );
    const { host, port, echo } = await serve({ routes, httpFilters: [rbacFilter(denyAll)] });
    const calls = echoClient(plaintextTransport(host, port).transport);
    expect(await codeOf(calls.unary({ value: "route" }))).toBe("OK");
    expect(await codeOf(calls.held({ value: "vhost" }, { timeoutMs: 5_000 }))).toBe("PermissionDenied");
    expect(echo.calls.get("Held")).toBeUndefined();
    // A vip reaches Held through the virtual host's override; it is held, so release it.
    const vip = calls.serverStream({ value: "s" });
    const items: string[] = [];
    await expect(async () => {
      for await (const item of vip) items.push(item.value);
    }).rejects.toMatchObject({ code: Code.PermissionDenied });
    expect(items).toEqual([]);
  });

  it("ends a denied gRPC call Trailers-Only: one HEADERS frame with grpc-status 7 that ends the stream", async () => {
    const { host, port, echo } = await serve({ httpFilters: [rbacFilter(rbacRules("DENY", denyBadUser))] });
    const session = http2Connect(`http://${host}:${port}`);
    try {
      const response = await new Promise<{
        headers: Record<string, unknown>;
        flags: number;
        data: number;
        trailers: boolean;
      }>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": UNARY,
          "content-type": "application/grpc",
          te: "trailers",
          "x-user": "bad",
        });
        let headers: Record<string, unknown> = {};
        let flags = 0;
        let data = 0;
        let trailers = false;
        stream.on("response", (h, f) => {
          headers = h;
          flags = f;
        });
        stream.on("data", (chunk: Buffer) => {
          data += chunk.length;
        });
        stream.on("trailers", () => {
          trailers = true;
        });
        stream.on("error", reject);
        stream.on("close", () => resolve({ headers, flags, data, trailers }));
        stream.end(Buffer.from([0, 0, 0, 0, 0]));
      });
      expect(response.headers[":status"]).toBe(200);
      expect(response.headers["content-type"]).toBe("application/grpc");
      expect(response.headers["grpc-status"]).toBe("7");
      expect(response.headers["grpc-message"]).toBe(`incoming RPC matched a deny policy "bad-user"`);
      expect(response.flags & h2.NGHTTP2_FLAG_END_STREAM).toBe(h2.NGHTTP2_FLAG_END_STREAM);
      expect(response.data).toBe(0);
      expect(response.trailers).toBe(false);
      expect(echo.calls.size).toBe(0);
    } finally {
      session.destroy();
    }
  });

  it("ends a denied call PERMISSION_DENIED in the Connect and gRPC-Web protocols too", async () => {
    const { host, port, echo } = await serve({ httpFilters: [rbacFilter(rbacRules("DENY", denyBadUser))] });
    const headers = { "x-user": "bad" };
    for (const transport of [
      createConnectTransport({ baseUrl: `http://${host}:${port}`, httpVersion: "2" }),
      createGrpcWebTransport({ baseUrl: `http://${host}:${port}`, httpVersion: "2" }),
    ]) {
      const calls = echoClient(transport);
      const unary = await calls.unary({ value: "u" }, { headers }).catch((e) => ConnectError.from(e));
      expect(unary).toMatchObject({
        code: Code.PermissionDenied,
        rawMessage: `incoming RPC matched a deny policy "bad-user"`,
      });
    }
    const connectStream = echoClient(createConnectTransport({ baseUrl: `http://${host}:${port}`, httpVersion: "2" }));
    await expect(async () => {
      for await (const _ of (
        connectStream as unknown as { serverStream: (r: unknown, o: unknown) => AsyncIterable<unknown> }
      ).serverStream({ value: "s" }, { headers }));
    }).rejects.toMatchObject({ code: Code.PermissionDenied });
    expect(echo.calls.size).toBe(0);
  });

  it("NACKs an RBAC filter with the LOG action and keeps the last good configuration", async () => {
    client = createXdsClient({ bootstrap: serverBootstrap(controlPlane) });
    const { host, port, name } = await serve({ httpFilters: [rbacFilter(rbacRules("DENY", denyBadUser))] });
    const calls = echoClient(plaintextTransport(host, port).transport);
    const bad = { headers: { "x-user": "bad" } };
    expect(await codeOf(calls.unary({ value: "1" }, bad))).toBe("PermissionDenied");

    controlPlane.setResource(
      serverListener({
        name,
        host,
        port,
        filterChains: [{ httpFilters: [rbacFilter(rbacRules("LOG", denyBadUser))] }],
      }),
    );
    let status = ClientResourceStatus.ACKED;
    let detail = "";
    for (let attempt = 0; attempt < 200 && status !== ClientResourceStatus.NACKED; attempt++) {
      await new Promise((resolve) => setImmediate(resolve));
      const dump = client.dumpResources().genericXdsConfigs.find((config) => config.typeUrl === LDS);
      status = dump?.clientStatus ?? status;
      detail = dump?.errorState?.details ?? "";
    }
    expect(status).toBe(ClientResourceStatus.NACKED);
    expect(detail).toContain("LOG is not supported");
    // The DENY policy of the last good Listener still applies, on the same connection and on a new one.
    expect(await codeOf(calls.unary({ value: "2" }, bad))).toBe("PermissionDenied");
    expect(await codeOf(echoClient(plaintextTransport(host, port).transport).unary({ value: "3" }, bad))).toBe(
      "PermissionDenied",
    );
    expect(started?.statuses.all).toEqual([{ serving: true }]);
  });
});
