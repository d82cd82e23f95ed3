// grpc's PSM security and authz cases (mTLS, TLS, plaintext fallback, mTLS errors, a SAN mismatch, RBAC allow and
// deny on a header regex and on a principal), run in every direction between our client and server and
// @grpc/grpc-js-xds's, with one control plane (@xdskit/control-plane) and certificates from @xdskit/test-pki written
// to files for each side's file_watcher certificate provider. Each case sets the client's Listener/route/Cluster
// (with its UpstreamTlsContext) and the server's Listener (with its DownstreamTlsContext and RBAC), then makes calls
// through a new client, so no connection outlives its case.
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRbacFilter,
  buildRouteConfiguration,
  buildServerListener,
  buildServerRouteConfiguration,
  buildUpstreamTlsSocket,
  type DownstreamTlsInit,
  type RbacRulesInit,
  type UpstreamTlsInit,
} from "@xdskit/control-plane";
import type { BootstrapConfig } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_ID, createSecurityMesh, SERVER_ID, type SecurityMesh } from "../src/security-mesh.js";
import { type Outcome, type SecurityServer, type Side, securityClient, securityServer } from "../src/security-peers.js";

const TARGET = "security.test";
const SERVER_NODE = "xds-security-interop-server";
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

interface Case {
  readonly name: string;
  readonly client?: UpstreamTlsInit;
  readonly server?: DownstreamTlsInit;
  readonly rbac?: RbacRulesInit;
  /** Calls and the outcome each must have ("OK", or a status code's name). */
  readonly calls: readonly { readonly headers?: Record<string, string>; readonly expect: string }[];
}

const mtlsClient: UpstreamTlsInit = { roots: "client", identity: "client", matchSubjectAltNames: [SERVER_ID] };
const mtlsServer: DownstreamTlsInit = { identity: "server", roots: "server", requireClientCertificate: true };
const principal = (id: string) => ({
  identifier: {
    case: "authenticated" as const,
    value: { principalName: { matchPattern: { case: "exact" as const, value: id } } },
  },
});
const headerRegex = (name: string, regex: string) => ({
  rule: {
    case: "header" as const,
    value: { name, headerMatchSpecifier: { case: "safeRegexMatch" as const, value: { regex } } },
  },
});
const anyPermission = { rule: { case: "any" as const, value: true } };
const anyPrincipal = { identifier: { case: "any" as const, value: true } };

const CASES: readonly Case[] = [
  { name: "mTLS", client: mtlsClient, server: mtlsServer, calls: [{ expect: "OK" }] },
  {
    name: "TLS, server authentication only",
    client: { roots: "client", matchSubjectAltNames: [SERVER_ID] },
    server: { identity: "server" },
    calls: [{ expect: "OK" }],
  },
  { name: "plaintext fallback", calls: [{ expect: "OK" }] },
  {
    name: "mTLS error: the client has no certificate",
    client: { roots: "client", matchSubjectAltNames: [SERVER_ID] },
    server: mtlsServer,
    calls: [{ expect: "Unavailable" }],
  },
  {
    name: "mTLS error: the client's certificate is from another CA",
    client: { roots: "client", identity: "foreign", matchSubjectAltNames: [SERVER_ID] },
    server: mtlsServer,
    calls: [{ expect: "Unavailable" }],
  },
  {
    name: "server authorization error: no SAN matches",
    client: { roots: "client", identity: "client", matchSubjectAltNames: ["spiffe://td.example/ns/default/sa/other"] },
    server: mtlsServer,
    calls: [{ expect: "Unavailable" }],
  },
  {
    name: "authz over plaintext: DENY on a header regex",
    rbac: {
      action: "DENY",
      policies: { "deny-bad-users": { permissions: [headerRegex("x-user", "bad-.*")], principals: [anyPrincipal] } },
    },
    calls: [
      { headers: { "x-user": "bad-1" }, expect: "PermissionDenied" },
      { headers: { "x-user": "good" }, expect: "OK" },
    ],
  },
  {
    name: "authz over TLS: ALLOW on a header regex",
    client: { roots: "client", matchSubjectAltNames: [SERVER_ID] },
    server: { identity: "server" },
    rbac: {
      action: "ALLOW",
      policies: {
        "allow-team": { permissions: [headerRegex("x-team", "payments|search")], principals: [anyPrincipal] },
      },
    },
    calls: [
      { headers: { "x-team": "search" }, expect: "OK" },
      { headers: { "x-team": "ads" }, expect: "PermissionDenied" },
    ],
  },
  {
    name: "authz over mTLS: ALLOW the client's principal",
    client: mtlsClient,
    server: mtlsServer,
    rbac: {
      action: "ALLOW",
      policies: { "allow-client": { permissions: [anyPermission], principals: [principal(CLIENT_ID)] } },
    },
    calls: [{ expect: "OK" }],
  },
  {
    name: "authz over mTLS: DENY the client's principal",
    client: mtlsClient,
    server: mtlsServer,
    rbac: {
      action: "DENY",
      policies: { "deny-client": { permissions: [anyPermission], principals: [principal(CLIENT_ID)] } },
    },
    calls: [{ expect: "PermissionDenied" }],
  },
];

const PAIRS: readonly { readonly client: Side; readonly server: Side }[] = [
  { client: "ours", server: "grpc-js-xds" },
  { client: "grpc-js-xds", server: "ours" },
  { client: "ours", server: "ours" },
];

describe.each(PAIRS)(
  "PSM security and authz: $client client, $server server",
  ({ client: clientSide, server: serverSide }) => {
    let mesh: SecurityMesh;
    let bootstrap: BootstrapConfig;
    let server: SecurityServer;

    beforeAll(async () => {
      mesh = await createSecurityMesh();
      bootstrap = mesh.bootstrap("xds-security-interop");
      server = await securityServer(serverSide, serverSide, mesh.bootstrap(SERVER_NODE));
    }, 60_000);

    afterAll(async () => {
      await server?.close();
      await mesh?.close();
    });

    /**
     * The client's four resources and the server's Listener for case `index`, resolved once the server has ACKed its
     * new Listener (each case's Listener differs, by its route configuration's name, so one is always sent).
     */
    async function configure(c: Case, index: number): Promise<void> {
      const { controlPlane } = mesh;
      const after = controlPlane.hooks.mark();
      controlPlane.setSnapshot([
        buildListener({ name: TARGET, routeConfigName: `${TARGET}-route` }),
        buildRouteConfiguration({ name: `${TARGET}-route`, cluster: "security-cluster" }),
        buildCluster({
          name: "security-cluster",
          ...(c.client === undefined ? {} : { transportSocket: buildUpstreamTlsSocket(c.client) }),
        }),
        buildClusterLoadAssignment({
          clusterName: "security-cluster",
          localities: [{ zone: "z", endpoints: [`127.0.0.1:${server.port}`] }],
        }),
        buildServerListener({
          name: mesh.serverListenerName(server.port),
          address: { host: "127.0.0.1", port: server.port },
          defaultFilterChain: {
            ...(c.server === undefined ? {} : { tls: c.server }),
            routeConfig: buildServerRouteConfiguration({ name: `server-routes-${index}` }),
            ...(c.rbac === undefined ? {} : { httpFilters: [buildRbacFilter(c.rbac)] }),
          },
        }),
      ]);
      const answer = await controlPlane.hooks.waitForRequest(
        (r) => r.typeUrl === LDS && r.node?.id === SERVER_NODE && r.responseNonce !== "" && r.disposition !== "stale",
        { after, timeoutMs: 20_000 },
      );
      if (answer.disposition === "nack") {
        throw new Error(
          `the ${serverSide} server NACKed its Listener: ${answer.errorDetail?.message ?? "(no detail)"}`,
        );
      }
    }

    /**
     * One call through a new client. The server applies a new Listener when it has it (and our client's ACK wait is
     * the server's), so a call may still meet the previous configuration for a moment: up to 5 calls, 100 ms apart,
     * until one ends as `wanted`. The server serves throughout, so no case passes for want of a server.
     */
    async function outcome(c: Case, headers: Record<string, string> | undefined, wanted: string): Promise<Outcome> {
      let last: Outcome = { code: "none", message: "" };
      for (let attempt = 0; attempt < 5; attempt++) {
        const client = securityClient(clientSide, `xds:///${TARGET}`, bootstrap);
        try {
          last = await client.call(headers);
        } finally {
          await client.close();
        }
        if (last.code === wanted) return last;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`${c.name}: expected ${wanted}, last outcome ${last.code} ${last.message}`);
    }

    for (const [index, c] of CASES.entries()) {
      it(c.name, async () => {
        await configure(c, index);
        for (const call of c.calls) {
          const result = await outcome(c, call.headers, call.expect);
          expect(result.code).toBe(call.expect);
          if (call.expect === "OK") expect(result.server).toBe(serverSide);
          else expect(result.message).not.toBe("");
        }
      });
    }
  },
);
