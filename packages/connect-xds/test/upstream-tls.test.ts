// A29 on the client over real HTTP/2 and TLS: a cluster's UpstreamTlsContext (roots and identity from the bootstrap's
// file_watcher certificate provider, SAN matchers) gives TLS or mTLS to its backends; a cluster without one uses the
// fallback (cleartext here); a SAN mismatch fails the connection and the pick moves on; connections are shared by
// address and security only; a rotated identity is used by the next connection.
import { mkdtempSync, rmSync } from "node:fs";
import type * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  buildUpstreamTlsSocket,
  type ManagementServer,
  type UpstreamTlsInit,
} from "@xdskit/control-plane";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { createTestCa, type TestCa, type TestCertificate, writeCertificate } from "@xdskit/test-pki";
import { createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served } from "./support/echo-client.js";
import { NODE_ID, startControlPlane } from "./support/harness.js";

const BACKEND_ID = "spiffe://td.example/ns/default/sa/backend";
const CLIENT_ID = "spiffe://td.example/ns/default/sa/client";
const ROTATED_ID = "spiffe://td.example/ns/default/sa/client-rotated";
const LATE_ID = "spiffe://td.example/ns/default/sa/client-late";

/** A TLS backend that records, per accepted connection, the client certificate's URI SANs ("" without one). */
async function tlsBackend(
  name: string,
  ca: TestCa,
  serverCert: TestCertificate,
  mtls: "required" | "optional" | "none",
): Promise<Backend & { readonly clientIds: string[] }> {
  const clientIds: string[] = [];
  const backend = await startBackend(name, {
    tls: {
      cert: serverCert.cert,
      key: serverCert.key,
      ...(mtls === "none" ? {} : { ca: ca.cert, requestCert: true, rejectUnauthorized: mtls === "required" }),
    },
    onSession: (session: http2.ServerHttp2Session) => {
      const peer = (session.socket as TLSSocket).getPeerCertificate();
      clientIds.push(peer.subjectaltname ?? "");
    },
  });
  return Object.assign(backend, { clientIds });
}

describe("TLS to backends from xDS (A29)", () => {
  let dir: string;
  let meshCa: TestCa;
  let server: ManagementServer;
  let client: XdsClient;
  let identityFiles: { certFile: string; keyFile: string };
  let caFile: string;
  const backends: Backend[] = [];
  const transports: XdsTransport[] = [];
  let mtlsRequired: Backend & { clientIds: string[] };
  let mtlsOptional: Backend & { clientIds: string[] };
  let tlsOnly: Backend & { clientIds: string[] };
  let impostor: Backend & { clientIds: string[] };
  let otherCa: Backend & { clientIds: string[] };
  let plain: Backend;

  const serverCert = (ca: TestCa, uri: string) =>
    ca.issue({ commonName: "backend", dnsNames: ["backend.test"], ipAddresses: ["127.0.0.1"], uris: [uri] });

  /** Listener `name` -> route -> cluster `name` (with `tls`, or none) -> `backendList`. */
  function service(name: string, backendList: readonly Backend[], tls: UpstreamTlsInit | undefined) {
    return [
      buildListener({ name, routeConfigName: `${name}-route` }),
      buildRouteConfiguration({ name: `${name}-route`, cluster: name }),
      buildCluster({ name, ...(tls === undefined ? {} : { transportSocket: buildUpstreamTlsSocket(tls) }) }),
      buildClusterLoadAssignment({
        clusterName: name,
        localities: [{ zone: "z", endpoints: backendList.map((b) => b.address) }],
      }),
    ];
  }

  function transportFor(name: string): XdsTransport {
    const transport = createXdsTransport({ target: `xds:///${name}`, client });
    transports.push(transport);
    return transport;
  }

  const mesh = { roots: "mesh", identity: "mesh", matchSubjectAltNames: [BACKEND_ID] } satisfies UpstreamTlsInit;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "connect-xds-tls-"));
    meshCa = createTestCa({ commonName: "mesh CA" });
    const foreignCa = createTestCa({ commonName: "another CA" });
    identityFiles = writeCertificate(dir, "client", meshCa.issue({ commonName: "client", uris: [CLIENT_ID] }));
    caFile = writeCertificate(dir, "ca", meshCa).certFile;
    [mtlsRequired, mtlsOptional, tlsOnly, impostor, otherCa, plain] = await Promise.all([
      tlsBackend("mtls", meshCa, serverCert(meshCa, BACKEND_ID), "required"),
      tlsBackend("optional", meshCa, serverCert(meshCa, BACKEND_ID), "optional"),
      tlsBackend("tls", meshCa, serverCert(meshCa, BACKEND_ID), "none"),
      tlsBackend("impostor", meshCa, serverCert(meshCa, "spiffe://td.example/ns/default/sa/impostor"), "none"),
      tlsBackend("other-ca", foreignCa, serverCert(foreignCa, BACKEND_ID), "none"),
      startBackend("plain"),
    ]);
    backends.push(mtlsRequired, mtlsOptional, tlsOnly, impostor, otherCa, plain);
    server = await startControlPlane();
    server.setSnapshot([
      ...service("mtls", [mtlsRequired], mesh),
      ...service("tls", [tlsOnly], {
        roots: "mesh",
        matchSubjectAltNames: [{ matchPattern: { case: "prefix", value: "spiffe://td.example/" } }],
      }),
      ...service("plain", [plain], undefined),
      ...service("fallback-tls", [tlsOnly], undefined),
      ...service("san-mismatch", [impostor], mesh),
      ...service("wrong-ca", [otherCa], mesh),
      ...service("no-identity", [mtlsRequired], { roots: "mesh", matchSubjectAltNames: [BACKEND_ID] }),
      ...service("failover", [impostor, tlsOnly], mesh),
      // One Listener, two clusters on the same backend address: TLS, and mTLS for calls with `x-mtls`.
      buildListener({ name: "shared", routeConfigName: "shared-route" }),
      create(RouteConfigurationSchema, {
        name: "shared-route",
        virtualHosts: [
          {
            domains: ["*"],
            routes: [
              {
                match: {
                  pathSpecifier: { case: "prefix", value: "" },
                  headers: [{ name: "x-mtls", headerMatchSpecifier: { case: "presentMatch", value: true } }],
                },
                action: { case: "route", value: { clusterSpecifier: { case: "cluster", value: "shared-mtls" } } },
              },
              {
                match: { pathSpecifier: { case: "prefix", value: "" } },
                action: { case: "route", value: { clusterSpecifier: { case: "cluster", value: "shared-tls" } } },
              },
            ],
          },
        ],
      }),
      ...service("switch", [mtlsOptional], { roots: "mesh" }),
      ...service("shared-tls", [mtlsOptional], { roots: "mesh" }).slice(2),
      ...service("shared-mtls", [mtlsOptional], { roots: "mesh", identity: "mesh" }).slice(2),
    ]);
    client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
        node: { id: NODE_ID },
        certificate_providers: {
          mesh: {
            plugin_name: "file_watcher",
            config: {
              certificate_file: identityFiles.certFile,
              private_key_file: identityFiles.keyFile,
              ca_certificate_file: caFile,
              refresh_interval: "0.1s",
            },
          },
        },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await client?.close();
    await Promise.all([...backends.map((b) => b.close()), server?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("calls over mTLS with the provider's identity, the server's SAN matched", async () => {
    expect(await served(echoClient(transportFor("mtls")))).toBe("mtls");
    expect(mtlsRequired.clientIds.at(-1)).toBe(`URI:${CLIENT_ID}`);
  });

  it("calls over TLS without an identity, the server's SAN matched by prefix", async () => {
    expect(await served(echoClient(transportFor("tls")))).toBe("tls");
    expect(tlsOnly.clientIds).toEqual([""]);
  });

  it("calls a cluster without UpstreamTlsContext in cleartext (the fallback)", async () => {
    expect(await served(echoClient(transportFor("plain")))).toBe("plain");
  });

  it("uses the application's fallback TLS, host name checked, for a cluster without UpstreamTlsContext", async () => {
    const fallback = (serverName: string) => {
      const transport = createXdsTransport({
        target: "xds:///fallback-tls",
        client,
        fallbackCredentials: { type: "tls", caPem: meshCa.cert, serverName },
      });
      transports.push(transport);
      return echoClient(transport);
    };
    expect(await served(fallback("backend.test"))).toBe("tls");
    const error = await served(fallback("elsewhere.test")).catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.Unavailable);
    expect((error as ConnectError).rawMessage).toContain("elsewhere.test");
  });

  it("fails a server whose certificate has no matching SAN, UNAVAILABLE, naming its SANs and the matchers", async () => {
    const error = await served(echoClient(transportFor("san-mismatch"))).catch((e: unknown) => ConnectError.from(e));
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Unavailable);
    expect((error as ConnectError).rawMessage).toContain("spiffe://td.example/ns/default/sa/impostor");
    expect((error as ConnectError).rawMessage).toContain(`exact "${BACKEND_ID}"`);
    expect(impostor.calls.size).toBe(0);
  });

  it("fails a server whose certificate another CA signed, and an mTLS server given no identity", async () => {
    for (const name of ["wrong-ca", "no-identity"]) {
      const error = await served(echoClient(transportFor(name))).catch((e: unknown) => ConnectError.from(e));
      expect((error as ConnectError).code, name).toBe(Code.Unavailable);
    }
    expect(otherCa.calls.size).toBe(0);
    expect(mtlsRequired.calls.get("Unary") ?? 0).toBe(1); // the mtls test's call only
  });

  it("matches SANs by safe_regex, by suffix ignoring case, by contains, and a DNS SAN exactly", async () => {
    const matchers: NonNullable<UpstreamTlsInit["matchSubjectAltNames"]>[] = [
      [{ matchPattern: { case: "safeRegex", value: { regex: "spiffe://td\\.example/ns/[a-z]+/sa/backend" } } }],
      [{ matchPattern: { case: "suffix", value: "/SA/BACKEND" }, ignoreCase: true }],
      [{ matchPattern: { case: "contains", value: "ns/default" } }],
      ["backend.test"],
    ];
    for (const [index, matchSubjectAltNames] of matchers.entries()) {
      server.setResources(service(`san-${index}`, [tlsOnly], { roots: "mesh", matchSubjectAltNames }));
      expect(await served(echoClient(transportFor(`san-${index}`)))).toBe("tls");
    }
    // Case matters without ignore_case.
    server.setResources(
      service("san-case", [tlsOnly], {
        roots: "mesh",
        matchSubjectAltNames: [{ matchPattern: { case: "suffix", value: "/SA/BACKEND" } }],
      }),
    );
    const error = await served(echoClient(transportFor("san-case"))).catch((e: unknown) => ConnectError.from(e));
    expect((error as ConnectError).code).toBe(Code.Unavailable);
  });

  it("fails calls UNAVAILABLE naming the file while the identity cannot be read, and serves once it can", async () => {
    const late = join(dir, "late");
    const lateClient = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
        node: { id: NODE_ID },
        certificate_providers: {
          late: {
            plugin_name: "file_watcher",
            config: {
              certificate_file: `${late}.pem`,
              private_key_file: `${late}-key.pem`,
              ca_certificate_file: caFile,
              refresh_interval: "0.05s",
            },
          },
        },
      },
    });
    try {
      server.setResources(
        service("late", [mtlsRequired], { roots: "late", identity: "late", matchSubjectAltNames: [BACKEND_ID] }),
      );
      const transport = createXdsTransport({ target: "xds:///late", client: lateClient });
      transports.push(transport);
      const echo = echoClient(transport);
      const error = await served(echo).catch((e: unknown) => ConnectError.from(e));
      expect((error as ConnectError).code).toBe(Code.Unavailable);
      expect((error as ConnectError).rawMessage).toContain(`${late}.pem`);
      writeCertificate(dir, "late", meshCa.issue({ commonName: "late", uris: [LATE_ID] }));
      // The provider reads the files within 50 ms; the connection retries after its backoff (1 s, then 1.6 s), and
      // calls fail fast until then (not wait-for-ready).
      let outcome: string | ConnectError = error as ConnectError;
      for (let i = 0; i < 300 && typeof outcome !== "string"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        outcome = await served(echo).catch((e: unknown) => ConnectError.from(e));
      }
      expect(outcome).toBe("mtls");
      expect(mtlsRequired.clientIds.at(-1)).toBe(`URI:${LATE_ID}`);
    } finally {
      await lateClient.close();
    }
  });

  it("moves a pick past the endpoint whose SAN does not match: every call reaches the right one", async () => {
    const echo = echoClient(transportFor("failover"));
    for (let i = 0; i < 10; i++) expect(await served(echo)).toBe("tls");
    expect(impostor.calls.size).toBe(0);
  });

  it("never shares a connection between clusters whose TLS differs, though the address is the same", async () => {
    const echo = echoClient(transportFor("shared"));
    expect(await served(echo)).toBe("optional");
    expect(await served(echo, { headers: { "x-mtls": "1" } })).toBe("optional");
    expect(await served(echo)).toBe("optional");
    // One connection per cluster (both connect when the routes arrive, in either order), the mTLS one with the identity.
    expect([...mtlsOptional.clientIds].sort()).toEqual(["", `URI:${CLIENT_ID}`]);
  });

  it("makes each new connection with the identity the provider read last (a rotation)", async () => {
    const transport = transportFor("mtls");
    const echo = echoClient(transport);
    expect(await served(echo)).toBe("mtls");
    writeCertificate(dir, "client", meshCa.issue({ commonName: "client", uris: [ROTATED_ID] }));
    // The provider reads the files every 0.1 s; each round ends the backend's connections so the next call makes a
    // new one, until a connection carries the new identity.
    for (let round = 0; round < 200 && mtlsRequired.clientIds.at(-1) !== `URI:${ROTATED_ID}`; round++) {
      await mtlsRequired.closeSessions();
      expect(await served(echo)).toBe("mtls");
    }
    expect(mtlsRequired.clientIds.at(-1)).toBe(`URI:${ROTATED_ID}`);
  });

  it("connects anew when a cluster's TLS changes: a new UpstreamTlsContext with an identity gives mTLS", async () => {
    const echo = echoClient(transportFor("switch"));
    expect(await served(echo)).toBe("optional");
    const before = mtlsOptional.clientIds.length;
    expect(mtlsOptional.clientIds.at(-1)).toBe("");
    server.setResource(
      buildCluster({ name: "switch", transportSocket: buildUpstreamTlsSocket({ roots: "mesh", identity: "mesh" }) }),
    );
    for (let round = 0; round < 200 && mtlsOptional.clientIds.length === before; round++) {
      expect(await served(echo)).toBe("optional");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(mtlsOptional.clientIds.at(-1)).toMatch(/^URI:spiffe:\/\/td\.example\/ns\/default\/sa\/client/);
  });
});
