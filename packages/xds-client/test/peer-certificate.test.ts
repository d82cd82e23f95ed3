// What the mesh runtime reads of a peer certificate, on real certificates from tools/test-pki: SANs, the RFC 2253
// subject, A41's principal names, and A29's SAN check of a server certificate.
import { X509Certificate } from "node:crypto";
import { createTestCa, type TestCa } from "@xdskit/test-pki";
import { beforeAll, describe, expect, it } from "vitest";
import {
  compileSanMatcher,
  parseSubjectAltNames,
  principalNamesOf,
  rfc2253Subject,
} from "../src/mesh/peer-certificate.js";
import type { StringMatcher } from "../src/resources/matchers.js";

let ca: TestCa;
beforeAll(() => {
  ca = createTestCa({ commonName: "peer CA" });
});

const x509 = (options: Parameters<TestCa["issue"]>[0]) => new X509Certificate(ca.issue(options).cert);
const exact = (value: string, ignoreCase = false): StringMatcher => ({ type: "exact", value, ignoreCase });

describe("peer certificates", () => {
  it("principal names: URI SANs first, else DNS SANs, else the RFC 2253 subject; no certificate is the empty name", () => {
    expect(
      principalNamesOf(x509({ commonName: "a", uris: ["spiffe://mesh/ns/a/sa/x"], dnsNames: ["a.example"] })),
    ).toEqual(["spiffe://mesh/ns/a/sa/x"]);
    expect(principalNamesOf(x509({ commonName: "a", dnsNames: ["a.example", "b.example"] }))).toEqual([
      "a.example",
      "b.example",
    ]);
    expect(principalNamesOf(x509({ commonName: "only, a subject" }))).toEqual(["CN=only\\, a subject"]);
    expect(principalNamesOf(undefined)).toEqual([""]);
  });

  it("reads Node's SAN text, quoted values included, and the subject least significant first", () => {
    expect(parseSubjectAltNames('DNS:a.example, URI:"spiffe://x/y, z", IP Address:10.0.0.1')).toEqual([
      { type: "DNS", value: "a.example" },
      { type: "URI", value: "spiffe://x/y, z" },
      { type: "IP Address", value: "10.0.0.1" },
    ]);
    expect(rfc2253Subject(new X509Certificate(ca.cert))).toBe("CN=peer CA");
  });

  describe("A29 SAN matching of a server certificate", () => {
    it("no matchers accept any certificate; otherwise one SAN must match one matcher", () => {
      const cert = x509({
        commonName: "s",
        uris: ["spiffe://mesh/ns/b/sa/backend"],
        dnsNames: ["backend.mesh"],
        ipAddresses: ["10.1.2.3"],
      });
      expect(compileSanMatcher([])(cert)).toBe(true);
      expect(compileSanMatcher([exact("spiffe://mesh/ns/b/sa/backend")])(cert)).toBe(true);
      expect(compileSanMatcher([exact("spiffe://mesh/ns/b/sa/other")])(cert)).toBe(false);
      expect(compileSanMatcher([{ type: "prefix", value: "spiffe://mesh/ns/b/", ignoreCase: false }])(cert)).toBe(true);
      expect(
        compileSanMatcher([{ type: "safe_regex", regex: "spiffe://mesh/ns/[a-z]+/sa/backend", ignoreCase: false }])(
          cert,
        ),
      ).toBe(true);
      expect(compileSanMatcher([{ type: "contains", value: "BACKEND", ignoreCase: true }])(cert)).toBe(true);
      expect(compileSanMatcher([{ type: "contains", value: "BACKEND", ignoreCase: false }])(cert)).toBe(false);
      expect(compileSanMatcher([exact("10.1.2.3")])(cert)).toBe(true);
      expect(compileSanMatcher([exact("s")])(cert)).toBe(false);
    });

    it("IPv6 SANs compare in canonical form", () => {
      const cert = x509({ commonName: "s", ipAddresses: ["2001:db8::1"] });
      expect(compileSanMatcher([exact("2001:db8::1")])(cert)).toBe(true);
      expect(compileSanMatcher([exact("2001:DB8:0:0:0:0:0:1")])(cert)).toBe(false);
    });

    it("an exact matcher follows DNS wildcard rules against a wildcard DNS SAN", () => {
      const cert = x509({ commonName: "s", dnsNames: ["*.svc.mesh"] });
      expect(compileSanMatcher([exact("api.svc.mesh")])(cert)).toBe(true);
      expect(compileSanMatcher([exact("API.svc.mesh.")])(cert)).toBe(true);
      expect(compileSanMatcher([exact("a.b.svc.mesh")])(cert)).toBe(false);
      expect(compileSanMatcher([exact("svc.mesh")])(cert)).toBe(false);
      expect(compileSanMatcher([{ type: "suffix", value: ".svc.mesh", ignoreCase: false }])(cert)).toBe(true);
      const odd = x509({ commonName: "s", dnsNames: ["a*.svc.mesh"] });
      expect(compileSanMatcher([exact("ab.svc.mesh")])(odd)).toBe(false);
    });
  });
});
