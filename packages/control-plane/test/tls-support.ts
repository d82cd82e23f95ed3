// Helpers for the TLS tests: ADS clients with TLS options, and a look at the certificate a new connection gets.
import { X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConnectionOptions, connect } from "node:tls";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import {
  LoadReportingService,
  type LoadStatsRequest,
  LoadStatsRequestSchema,
} from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import type { TestCertificate } from "@xdskit/test-pki";
import type { Logger, ManagementServer } from "../src/index.js";
import type { AdsClient } from "./ads-client.js";

/** An ADS client to `server` over TLS (the server's `url` is https), with the client's TLS options. */
export function tlsAdsClient(server: ManagementServer, options: ConnectionOptions): AdsClient {
  return createClient(
    AggregatedDiscoveryService,
    createGrpcTransport({ baseUrl: `https://localhost:${server.port}`, nodeOptions: options }),
  );
}

/** An LRS stream to `baseUrl` whose first request introduces `node`; `abort` ends it. */
export function openLrsStream(
  baseUrl: string,
  node: { readonly id: string; readonly cluster?: string },
  tls?: ConnectionOptions,
) {
  const lrs = createClient(
    LoadReportingService,
    createGrpcTransport({ baseUrl, ...(tls ? { nodeOptions: tls } : {}) }),
  );
  const requests = createWritableIterable<LoadStatsRequest>();
  const controller = new AbortController();
  const responses = lrs.streamLoadStats(requests, { signal: controller.signal })[Symbol.asyncIterator]();
  void requests.write(create(LoadStatsRequestSchema, { node })).catch(() => {});
  return { responses, abort: () => controller.abort() };
}

/** Client options presenting `identity` and trusting `ca`. */
export function clientTls(ca: TestCertificate, identity?: TestCertificate): ConnectionOptions {
  return { ca: ca.cert, ...(identity ? { cert: identity.cert, key: identity.key } : {}) };
}

/** The serial number of the certificate a new TLS connection to `port` is served (the client trusts nothing). */
export function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false, ALPNProtocols: ["h2"] }, () => {
      const served = socket.getPeerX509Certificate();
      socket.destroy();
      if (served) resolve(served.serialNumber);
      else reject(new Error("no certificate served"));
    });
    socket.on("error", reject);
  });
}

export function serialOf(certificate: TestCertificate): string {
  return new X509Certificate(certificate.cert).serialNumber;
}

/** A temporary directory, removed by the returned function. */
export function tempDir(): { readonly path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), "xdskit-tls-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A logger that keeps what it is told, as `level message` lines. */
export function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const at =
    (level: string) =>
    (message: string): void => {
      lines.push(`${level} ${message}`);
    };
  return { lines, error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") };
}
