// The file_watcher certificate provider (A29) on real files in a temporary directory, certificates from
// tools/test-pki, time on a virtual clock: start, rotation, files missing, unreadable or invalid (before and after a
// good read), a half-done rotation, change-only notifications, a refresh_interval past Node's timer limit, close.
import { chmodSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestCa, type TestCa } from "@xdskit/test-pki";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBootstrap } from "../src/bootstrap/bootstrap.js";
import type { CertificateMaterial } from "../src/certificates/certificate-provider-types.js";
import { createCertificateProviders, MAX_REFRESH_TIMER_MS } from "../src/certificates/certificate-providers.js";
import type { Logger } from "../src/observability/logger.js";
import { createVirtualClock } from "./support/virtual-clock.js";

let dir: string;
let ca: TestCa;
let otherCa: TestCa;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "xdskit-certs-"));
  ca = createTestCa({ commonName: "mesh CA" });
  otherCa = createTestCa({ commonName: "other CA" });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh sub-directory per test, so tests do not see each other's files. */
function files(name: string) {
  const base = mkdtempSync(join(dir, `${name}-`));
  return { cert: join(base, "cert.pem"), key: join(base, "key.pem"), ca: join(base, "ca.pem") };
}

function recordingLogger() {
  const lines: string[] = [];
  const logger: Logger = {
    error: (m) => lines.push(`error ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    info: (m) => lines.push(`info ${m}`),
    debug: () => {},
  };
  return { logger, lines };
}

function providersFor(paths: { cert?: string; key?: string; ca?: string }, refreshInterval = "10s") {
  const bootstrap = parseBootstrap({
    xds_servers: [{ server_uri: "127.0.0.1:1", channel_creds: [{ type: "insecure" }] }],
    certificate_providers: {
      mesh: {
        plugin_name: "file_watcher",
        config: {
          ...(paths.cert === undefined ? {} : { certificate_file: paths.cert }),
          ...(paths.key === undefined ? {} : { private_key_file: paths.key }),
          ...(paths.ca === undefined ? {} : { ca_certificate_file: paths.ca }),
          refresh_interval: refreshInterval,
        },
      },
    },
  });
  const clock = createVirtualClock();
  const { logger, lines } = recordingLogger();
  const providers = createCertificateProviders(bootstrap, { clock, logger });
  return { providers, clock, lines };
}

describe("file_watcher certificate provider", () => {
  it("reads the identity and the roots at start, and serves them until they change", async () => {
    const p = files("start");
    const leaf = ca.issue({ commonName: "server", uris: ["spiffe://mesh/ns/a/sa/server"] });
    writeFileSync(p.cert, leaf.cert);
    writeFileSync(p.key, leaf.key);
    writeFileSync(p.ca, ca.cert);
    const { providers, clock } = providersFor(p);
    expect(providers.names).toEqual(["mesh"]);
    expect(clock.pending()).toEqual([]);
    const provider = providers.get("mesh")!;
    expect(provider).toBe(providers.get("mesh"));
    expect(providers.get("absent")).toBeUndefined();
    expect(provider.pluginName).toBe("file_watcher");
    expect(provider.current()).toEqual({
      identity: { certChainPem: leaf.cert, privateKeyPem: leaf.key },
      roots: { caPem: ca.cert },
    });
    expect(Object.isFrozen(provider.current())).toBe(true);
    expect(provider.lastError).toBeUndefined();
    expect(clock.pending()).toEqual([10_000]);
    providers.close();
  });

  it("a rotation is picked up at the next refresh and told to watchers once; unchanged files tell nothing", async () => {
    const p = files("rotate");
    const first = ca.issue({ commonName: "one" });
    writeFileSync(p.cert, first.cert);
    writeFileSync(p.key, first.key);
    const { providers, clock, lines } = providersFor({ cert: p.cert, key: p.key });
    const provider = providers.get("mesh")!;
    const seen: CertificateMaterial[] = [];
    provider.watch((material) => seen.push(material));
    await clock.advance(10_000);
    expect(seen).toEqual([]);
    const second = ca.issue({ commonName: "two", freshKey: true });
    writeFileSync(p.cert, second.cert);
    writeFileSync(p.key, second.key);
    await clock.advance(9_999);
    expect(provider.current().identity?.certChainPem).toBe(first.cert);
    await clock.advance(1);
    expect(provider.current().identity).toEqual({ certChainPem: second.cert, privateKeyPem: second.key });
    expect(seen).toEqual([provider.current()]);
    await clock.advance(30_000);
    expect(seen).toHaveLength(1);
    expect(lines).toContain("info [xds-client] [certificate-provider mesh] serving new material (identity)");
    providers.close();
  });

  it("a rotation caught half-way (new certificate, old key) keeps the old identity until the key follows", async () => {
    const p = files("half");
    const first = ca.issue({ commonName: "one" });
    writeFileSync(p.cert, first.cert);
    writeFileSync(p.key, first.key);
    const { providers, clock, lines } = providersFor({ cert: p.cert, key: p.key });
    const provider = providers.get("mesh")!;
    const second = ca.issue({ commonName: "two", freshKey: true });
    writeFileSync(p.cert, second.cert);
    await clock.advance(10_000);
    expect(provider.current().identity?.certChainPem).toBe(first.cert);
    expect(provider.lastError).toBe(
      `private_key_file ${p.key}: the private key is not the certificate's (its public key differs)`,
    );
    expect(lines.filter((l) => l.startsWith("error"))).toEqual([
      `error [xds-client] [certificate-provider mesh] cannot use the files: private_key_file ${p.key}: the private key is not the certificate's (its public key differs) (keeping the last good material)`,
    ]);
    await clock.advance(10_000);
    expect(lines.filter((l) => l.startsWith("error"))).toHaveLength(1);
    writeFileSync(p.key, second.key);
    await clock.advance(10_000);
    expect(provider.current().identity).toEqual({ certChainPem: second.cert, privateKeyPem: second.key });
    expect(provider.lastError).toBeUndefined();
    expect(lines).toContain("info [xds-client] [certificate-provider mesh] the files read well again");
    providers.close();
  });

  it("a file missing, unreadable or invalid at start: nothing served, a clear error, no crash; served once fixed", async () => {
    const p = files("bad-start");
    const { providers, clock } = providersFor(p);
    const provider = providers.get("mesh")!;
    expect(provider.current()).toEqual({});
    expect(provider.lastError).toMatch(
      new RegExp(`^certificate_file ${p.cert}: ENOENT .*; ca_certificate_file ${p.ca}: ENOENT .*$`),
    );
    writeFileSync(p.cert, "not a certificate");
    writeFileSync(p.key, "not a key");
    writeFileSync(p.ca, `${ca.cert}\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`);
    await clock.advance(10_000);
    expect(provider.current()).toEqual({});
    expect(provider.lastError).toMatch(
      new RegExp(
        `^certificate_file ${p.cert}: no PEM certificate in it; ca_certificate_file ${p.ca}: certificate 2 does not parse`,
      ),
    );
    const leaf = ca.issue({ commonName: "s" });
    writeFileSync(p.cert, leaf.cert);
    await clock.advance(10_000);
    expect(provider.lastError).toMatch(new RegExp(`^private_key_file ${p.key}: the private key does not parse`));
    writeFileSync(p.key, leaf.key);
    writeFileSync(p.ca, ca.cert);
    expect(provider.refresh()).toBe(true);
    expect(provider.current()).toEqual({
      identity: { certChainPem: leaf.cert, privateKeyPem: leaf.key },
      roots: { caPem: ca.cert },
    });
    providers.close();
  });

  it("a file that goes missing or unreadable after a good read keeps the last good material", async () => {
    const p = files("bad-later");
    const leaf = ca.issue({ commonName: "s" });
    writeFileSync(p.cert, leaf.cert);
    writeFileSync(p.key, leaf.key);
    writeFileSync(p.ca, ca.cert);
    const { providers, clock } = providersFor(p);
    const provider = providers.get("mesh")!;
    const good = provider.current();
    unlinkSync(p.ca);
    await clock.advance(10_000);
    expect(provider.current()).toBe(good);
    expect(provider.lastError).toMatch(new RegExp(`^ca_certificate_file ${p.ca}: ENOENT`));
    writeFileSync(p.ca, otherCa.cert);
    if (process.getuid?.() !== 0) {
      chmodSync(p.cert, 0o000);
      await clock.advance(10_000);
      expect(provider.current().identity).toBe(good.identity);
      expect(provider.current().roots).toEqual({ caPem: otherCa.cert });
      expect(provider.lastError).toMatch(new RegExp(`^certificate_file ${p.cert}: EACCES`));
      chmodSync(p.cert, 0o644);
    }
    await clock.advance(10_000);
    expect(provider.lastError).toBeUndefined();
    expect(provider.current()).toEqual({ identity: good.identity, roots: { caPem: otherCa.cert } });
    providers.close();
  });

  it("a throwing watcher is logged; the others still hear", async () => {
    const p = files("listeners");
    writeFileSync(p.ca, ca.cert);
    const { providers, clock, lines } = providersFor({ ca: p.ca });
    const provider = providers.get("mesh")!;
    const heard: string[] = [];
    provider.watch(() => {
      throw new Error("boom");
    });
    const stop = provider.watch((m) => heard.push(m.roots?.caPem ?? ""));
    writeFileSync(p.ca, otherCa.cert);
    await clock.advance(10_000);
    expect(heard).toEqual([otherCa.cert]);
    expect(lines).toContain("error [xds-client] [certificate-provider mesh] a listener threw: boom");
    stop();
    writeFileSync(p.ca, ca.cert);
    await clock.advance(10_000);
    expect(heard).toHaveLength(1);
    providers.close();
  });

  it("a refresh_interval past 2^31-1 ms is armed at Node's limit, never at once; close stops the timers", async () => {
    const p = files("long");
    writeFileSync(p.ca, ca.cert);
    const { providers, clock } = providersFor({ ca: p.ca }, "315576000000s");
    providers.get("mesh");
    expect(clock.pending()).toEqual([MAX_REFRESH_TIMER_MS]);
    providers.close();
    expect(clock.pending()).toEqual([]);
    const late = providers.get("mesh")!;
    expect(late.refresh()).toBe(false);
  });
});
