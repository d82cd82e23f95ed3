// A36's filter chain selection for real connections: by destination (127.0.0.1 and 127.0.0.2 are both loopback on
// Linux, so one server on 0.0.0.0 sees two destinations), by source address and source port, by source type, the
// default chain, no match (closed without a byte), IPv4-mapped addresses on a dual-stack listener, and an empty
// transport_protocol (never matches: docs/decisions.md#empty-transport-protocol).
import { connect } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoClient } from "./support/echo-service.js";
import { plaintextTransport, type StartedServer, serving, startControlPlane, startServer } from "./support/harness.js";
import { type ChainInit, serverListener, serverRoutes } from "./support/server-listener.js";

/** A chain whose calls fail UNAVAILABLE naming `label` (its one route forwards), so a call tells which chain ran. */
function labelled(label: string, chain: Omit<ChainInit, "routes"> = {}): ChainInit {
  return {
    ...chain,
    name: label,
    routes: serverRoutes(label, [
      {
        name: label,
        match: { pathSpecifier: { case: "prefix", value: "" } },
        action: { case: "route", value: { clusterSpecifier: { case: "cluster", value: "x" } } },
      },
    ]),
  };
}

/** Which chain served a call from `localAddress` to host:port: its label, "served", or "closed" (no chain). */
async function chainOf(host: string, port: number, localAddress?: string): Promise<string> {
  const { transport } = plaintextTransport(host, port, localAddress === undefined ? {} : { localAddress });
  try {
    await echoClient(transport).unary({ value: "which" }, { timeoutMs: 5_000 });
    return "served";
  } catch (error) {
    const e = ConnectError.from(error);
    const match = /matched route ([^/]+)-vh\//.exec(e.rawMessage);
    if (e.code === Code.Unavailable && match) return match[1]!;
    return "closed";
  }
}

/** Bytes a raw connection from `localAddress` receives before the server closes it. */
function bytesBeforeClose(host: string, port: number, localAddress?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = 0;
    const socket = connect({ host, port, ...(localAddress === undefined ? {} : { localAddress }) });
    socket.on("data", (chunk) => {
      received += chunk.length;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
    socket.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    // A connection a chain took stays open: end it so the test reads what it got.
    setTimeout(() => socket.end(), 1_000).unref();
  });
}

describe("filter chain selection (A36)", () => {
  let controlPlane: ManagementServer;
  let started: StartedServer | undefined;

  beforeEach(async () => {
    controlPlane = await startControlPlane();
  });
  afterEach(async () => {
    await started?.server.close();
    started = undefined;
    await controlPlane.close();
  });

  async function serve(chains: readonly ChainInit[], defaultChain?: ChainInit, host = "0.0.0.0") {
    started = await startServer(controlPlane, { host });
    const { name, port } = started;
    controlPlane.setResource(
      serverListener({
        name,
        host,
        port,
        filterChains: chains,
        ...(defaultChain === undefined ? {} : { defaultChain }),
      }),
    );
    await started.statuses.until(serving);
    return port;
  }

  it("selects by destination: the most specific prefix range wins", async () => {
    const port = await serve([
      labelled("wide", { match: { prefixRanges: ["127.0.0.0/8"] } }),
      labelled("narrow", { match: { prefixRanges: ["127.0.0.2/32"] } }),
    ]);
    expect(await chainOf("127.0.0.1", port)).toBe("wide");
    expect(await chainOf("127.0.0.2", port)).toBe("narrow");
  });

  it("selects by source address and source port", async () => {
    const port = await serve([
      labelled("any-source"),
      labelled("from-2", { match: { sourcePrefixRanges: ["127.0.0.2/32"] } }),
    ]);
    expect(await chainOf("127.0.0.1", port, "127.0.0.1")).toBe("any-source");
    expect(await chainOf("127.0.0.1", port, "127.0.0.2")).toBe("from-2");
  });

  it("selects SAME_IP_OR_LOOPBACK over ANY for a loopback peer, and never EXTERNAL", async () => {
    const port = await serve([
      labelled("external", { match: { sourceType: "EXTERNAL" } }),
      labelled("local", { match: { sourceType: "SAME_IP_OR_LOOPBACK" } }),
    ]);
    expect(await chainOf("127.0.0.1", port, "127.0.0.3")).toBe("local");
  });

  it("falls back to the default chain, and without one closes the connection without a byte", async () => {
    const withDefault = await serve(
      [labelled("only-2", { match: { prefixRanges: ["127.0.0.2/32"] } })],
      labelled("default"),
    );
    expect(await chainOf("127.0.0.1", withDefault)).toBe("default");
    expect(await chainOf("127.0.0.2", withDefault)).toBe("only-2");
    await started?.server.close();

    const without = await serve([labelled("only-2", { match: { prefixRanges: ["127.0.0.2/32"] } })]);
    expect(await bytesBeforeClose("127.0.0.1", without)).toBe(0);
    expect(await chainOf("127.0.0.1", without)).toBe("closed");
    expect(await chainOf("127.0.0.2", without)).toBe("only-2");
  });

  it("reads an IPv4-mapped peer on a dual-stack listener as IPv4, for ranges and for SAME_IP_OR_LOOPBACK", async () => {
    // On `::`, an IPv4 client's addresses read ::ffff:127.0.0.x; the chains name IPv4 ranges.
    const port = await serve(
      [
        labelled("v4-dest", { match: { prefixRanges: ["127.0.0.2/32"] } }),
        labelled("v4-source", {
          match: {
            prefixRanges: ["127.0.0.1/32"],
            sourceType: "SAME_IP_OR_LOOPBACK",
            sourcePrefixRanges: ["127.0.0.3/32"],
          },
        }),
        labelled("v4-local", { match: { prefixRanges: ["127.0.0.1/32"], sourceType: "SAME_IP_OR_LOOPBACK" } }),
      ],
      undefined,
      "::",
    );
    expect(await chainOf("127.0.0.2", port)).toBe("v4-dest");
    expect(await chainOf("127.0.0.1", port, "127.0.0.3")).toBe("v4-source");
    expect(await chainOf("127.0.0.1", port, "127.0.0.1")).toBe("v4-local");
  });

  it("never selects a chain whose transport_protocol is empty", async () => {
    const port = await serve([labelled("empty", { match: { transportProtocol: "" } })], labelled("default"));
    expect(await chainOf("127.0.0.1", port)).toBe("default");
  });

  it("serves a chain that lets calls through", async () => {
    const port = await serve([{ match: { prefixRanges: ["127.0.0.1/32"] } }]);
    expect(await chainOf("127.0.0.1", port)).toBe("served");
  });
});
