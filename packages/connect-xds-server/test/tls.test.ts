// A29 on the server over real HTTP/2 and TLS: filter chains whose DownstreamTlsContext names the bootstrap's
// file_watcher certificate provider instances (certificates from @xdskit/test-pki in temp files), mTLS with the
// client's SPIFFE ID reaching RBAC, refused handshakes (no certificate when one is required, another CA's, an expired
// one) while good clients are served, identity rotation under a call in flight, certificate files missing or invalid
// at start and after a rotation, fallback credentials, and connections that complete TLS and send nothing.
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { Code, ConnectError } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { ManagementServer } from "@xdskit/control-plane";
import { createTestCa, issueLocalhost, type TestCa, type TestCertificate, writeCertificate } from "@xdskit/test-pki";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { echoClient } from "./support/echo-service.js";
import {
  type FileWatcherInit,
  memoryLogger,
  plaintextTransport,
  type StartedServer,
  type StartOptions,
  serving,
  startControlPlane,
  startServer,
} from "./support/harness.js";
import { type ChainInit, rbacFilter, rbacRules, serverListener } from "./support/server-listener.js";

const GOOD_ID = "spiffe://example.org/ns/test/sa/good";
const OTHER_ID = "spiffe://example.org/ns/test/sa/other";

interface ClientTls {
  readonly ca: string;
  readonly cert?: TestCertificate;
}

/** A gRPC transport over TLS to localhost:port (the server certificate names localhost). */
function tlsTransport(port: number, tls: ClientTls) {
  return createGrpcTransport({
    baseUrl: `https://localhost:${port}`,
    nodeOptions: {
      ca: tls.ca,
      ...(tls.cert === undefined ? {} : { cert: tls.cert.cert, key: tls.cert.key }),
    },
  });
}

/** The outcome of one unary call: "OK", or the code's name. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "OK";
  } catch (error) {
    return Code[ConnectError.from(error).code] ?? "?";
  }
}

/** The common name of the certificate the server presents to a new TLS connection. */
function serverCommonName(port: number, tls: ClientTls): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: "127.0.0.1",
      port,
      servername: "localhost",
      ALPNProtocols: ["h2"],
      ca: tls.ca,
      ...(tls.cert === undefined ? {} : { cert: tls.cert.cert, key: tls.cert.key }),
    });
    socket.once("secureConnect", () => {
      const name = socket.getPeerCertificate().subject?.CN;
      socket.destroy();
      resolve(String(name));
    });
    socket.once("error", reject);
  });
}

describe("TLS from xDS (A29)", () => {
  let ca: TestCa;
  let otherCa: TestCa;
  let serverCert: TestCertificate;
  let goodClient: TestCertificate;
  let otherClient: TestCertificate;
  let foreignClient: TestCertificate;
  let expiredClient: TestCertificate;
  let dir: string;
  let controlPlane: ManagementServer;
  let started: StartedServer | undefined;

  beforeAll(() => {
    ca = createTestCa();
    otherCa = createTestCa({ commonName: "another CA" });
    serverCert = issueLocalhost(ca);
    goodClient = ca.issue({ commonName: "good", uris: [GOOD_ID] });
    otherClient = ca.issue({ commonName: "other", uris: [OTHER_ID] });
    foreignClient = otherCa.issue({ commonName: "foreign", uris: [GOOD_ID] });
    const day = 24 * 60 * 60 * 1000;
    expiredClient = ca.issue({
      commonName: "expired",
      uris: [GOOD_ID],
      notBefore: new Date(Date.now() - 10 * day),
      notAfter: new Date(Date.now() - day),
    });
    // Two CAs' RSA keys: seconds on a loaded machine (the 10 s default ran out in a full run at load 25).
  }, 60_000);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "xds-server-tls-"));
    controlPlane = await startControlPlane();
  });
  afterEach(async () => {
    await started?.server.close();
    started = undefined;
    await controlPlane.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The server identity and the CA written to `dir`, as one file_watcher instance's config. */
  function writeProvider(identity: TestCertificate = serverCert, refreshInterval?: string): FileWatcherInit {
    const files = writeCertificate(dir, "server", identity);
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, ca.cert);
    return {
      certificate_file: files.certFile,
      private_key_file: files.keyFile,
      ca_certificate_file: caFile,
      ...(refreshInterval === undefined ? {} : { refresh_interval: refreshInterval }),
    };
  }

  async function serve(chain: ChainInit, options: StartOptions = {}): Promise<StartedServer> {
    started = await startServer(controlPlane, options);
    const { name, host, port } = started;
    controlPlane.setResource(serverListener({ name, host, port, filterChains: [chain] }));
    await started.statuses.until(serving);
    return started;
  }

  it("serves mTLS from the providers, and RBAC reads the client certificate's SPIFFE ID", async () => {
    const allowGood = rbacRules("ALLOW", {
      good: {
        permissions: [{ rule: { case: "any", value: true } }],
        principals: [
          {
            identifier: {
              case: "authenticated",
              value: { principalName: { matchPattern: { case: "exact", value: GOOD_ID } } },
            },
          },
        ],
      },
    });
    const { port, echo } = await serve(
      { tls: { identity: "pki", roots: "pki", requireClientCertificate: true }, httpFilters: [rbacFilter(allowGood)] },
      { certificateProviders: { pki: writeProvider() } },
    );
    const good = echoClient(tlsTransport(port, { ca: ca.cert, cert: goodClient }));
    expect(await good.unary({ value: "m" })).toMatchObject({ value: "echo:m" });
    const other = echoClient(tlsTransport(port, { ca: ca.cert, cert: otherClient }));
    const denied = await other.unary({ value: "o" }).catch((error) => ConnectError.from(error));
    expect(denied).toMatchObject({ code: Code.PermissionDenied });
    expect(echo.calls.get("Unary")).toBe(1);
    expect(await serverCommonName(port, { ca: ca.cert, cert: goodClient })).toBe("localhost");
  });

  it("refuses a client without a certificate, with another CA's and with an expired one, and serves the others", async () => {
    const { port, echo } = await serve(
      { tls: { identity: "pki", roots: "pki", requireClientCertificate: true } },
      { certificateProviders: { pki: writeProvider() } },
    );
    for (const cert of [undefined, foreignClient, expiredClient]) {
      const calls = echoClient(tlsTransport(port, { ca: ca.cert, ...(cert === undefined ? {} : { cert }) }));
      expect(await outcome(calls.unary({ value: "refused" }, { timeoutMs: 5_000 }))).not.toBe("OK");
    }
    expect(echo.calls.get("Unary")).toBeUndefined();
    const good = echoClient(tlsTransport(port, { ca: ca.cert, cert: goodClient }));
    expect(await good.unary({ value: "still" })).toMatchObject({ value: "echo:still" });
  });

  it("asks for no certificate without a validation context, and verifies one presented when it is optional", async () => {
    // Identity only: plain TLS, any client.
    const { port } = await serve({ tls: { identity: "pki" } }, { certificateProviders: { pki: writeProvider() } });
    expect(await outcome(echoClient(tlsTransport(port, { ca: ca.cert })).unary({ value: "a" }))).toBe("OK");
    await started?.server.close();

    // Roots without require_client_certificate: no certificate passes, a bad one does not (A29).
    const optional = await serve(
      { tls: { identity: "pki", roots: "pki", requireClientCertificate: false } },
      { certificateProviders: { pki: writeProvider() } },
    );
    const call = (cert?: TestCertificate) =>
      outcome(
        echoClient(tlsTransport(optional.port, { ca: ca.cert, ...(cert === undefined ? {} : { cert }) })).unary(
          { value: "b" },
          { timeoutMs: 5_000 },
        ),
      );
    expect(await call()).toBe("OK");
    expect(await call(goodClient)).toBe("OK");
    expect(await call(foreignClient)).not.toBe("OK");
    expect(await call(expiredClient)).not.toBe("OK");
  });

  it("rotates its identity for new handshakes while a call in flight on the old connection completes", async () => {
    const logger = memoryLogger();
    const { port, echo } = await serve(
      { tls: { identity: "pki", roots: "pki", requireClientCertificate: true } },
      { certificateProviders: { pki: writeProvider(serverCert, "0.05s") }, logger },
    );
    const client = { ca: ca.cert, cert: goodClient };
    const calls = echoClient(tlsTransport(port, client));
    const held = calls.held({ value: "across" });
    await echo.heldArrived();
    expect(await serverCommonName(port, client)).toBe("localhost");

    const mark = logger.lines.length;
    writeCertificate(dir, "server", issueLocalhost(ca, "localhost-rotated"));
    await logger.waitFor("serving new material (identity", mark);
    expect(await serverCommonName(port, client)).toBe("localhost-rotated");
    // A new connection is served with the new identity; the old one keeps its call.
    expect(await echoClient(tlsTransport(port, client)).unary({ value: "new" })).toMatchObject({ value: "echo:new" });
    echo.release();
    expect(await held).toMatchObject({ value: "held:across" });
  });

  it("refuses TLS with a clear error while the certificate file is missing, serves once it appears, and keeps the last good identity when a rotation is invalid", async () => {
    const logger = memoryLogger();
    const config = writeProvider(serverCert, "0.05s");
    unlinkSync(config.certificate_file!);
    const { port } = await serve(
      { tls: { identity: "pki", roots: "pki", requireClientCertificate: true } },
      { certificateProviders: { pki: config }, logger },
    );
    const client = { ca: ca.cert, cert: goodClient };
    expect(await outcome(echoClient(tlsTransport(port, client)).unary({ value: "x" }, { timeoutMs: 5_000 }))).not.toBe(
      "OK",
    );
    const refused = await logger.waitFor("TLS connections refused");
    expect(refused).toMatch(
      /^warn \[connect-xds-server\] TLS connections refused: certificate provider instance "pki" has no identity certificate yet \(.*ENOENT/,
    );

    writeCertificate(dir, "server", serverCert);
    await logger.waitFor("serving new material (identity");
    expect(await echoClient(tlsTransport(port, client)).unary({ value: "y" })).toMatchObject({ value: "echo:y" });

    // A certificate that is not PEM: the provider keeps the last good identity, and so do handshakes.
    const mark = logger.lines.length;
    writeFileSync(config.certificate_file!, "not a certificate");
    await logger.waitFor("cannot use the files", mark);
    expect(await serverCommonName(port, client)).toBe("localhost");
    expect(await echoClient(tlsTransport(port, client)).unary({ value: "z" })).toMatchObject({ value: "echo:z" });
  });

  it("uses the fallback credentials on a chain without transport_socket", async () => {
    const { port } = await serve(
      {},
      {
        fallbackCredentials: { type: "tls", certChainPem: serverCert.cert, privateKeyPem: serverCert.key },
      },
    );
    expect(await echoClient(tlsTransport(port, { ca: ca.cert })).unary({ value: "f" })).toMatchObject({
      value: "echo:f",
    });
    expect(
      await outcome(
        echoClient(plaintextTransport("127.0.0.1", port).transport).unary({ value: "p" }, { timeoutMs: 5_000 }),
      ),
    ).not.toBe("OK");
  });

  it("closes connections that complete TLS and send nothing once handshakeTimeoutMs passes, and keeps serving", async () => {
    // 20 connections are enough to show that the timer applies to each one (no connection outlives it), and keep
    // the test fast on a loaded machine: each one costs a TLS handshake. Memory is then bounded by the accept rate
    // times handshakeTimeoutMs, whatever the number of idle clients over time.
    const { port } = await serve(
      { tls: { identity: "pki", roots: "pki", requireClientCertificate: true } },
      { certificateProviders: { pki: writeProvider() }, handshakeTimeoutMs: 300 },
    );
    const idle = Array.from(
      { length: 20 },
      () =>
        new Promise<boolean>((resolve, reject) => {
          let secured = false;
          const socket = tlsConnect({
            host: "127.0.0.1",
            port,
            servername: "localhost",
            ALPNProtocols: ["h2"],
            ca: ca.cert,
            cert: goodClient.cert,
            key: goodClient.key,
          });
          socket.once("secureConnect", () => {
            secured = true;
          });
          socket.on("error", reject);
          socket.resume();
          // Resolves only when the server closes it: the client never ends it.
          socket.on("close", () => resolve(secured));
        }),
    );
    const results = await Promise.all(idle);
    expect(results).toEqual(Array.from({ length: 20 }, () => true));
    expect(
      await echoClient(tlsTransport(port, { ca: ca.cert, cert: goodClient })).unary({ value: "ok" }),
    ).toMatchObject({ value: "echo:ok" });
  });
});
