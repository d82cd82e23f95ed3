import { X509Certificate } from "node:crypto";
import { createTestCa } from "@xdskit/test-pki";
import { describe, expect, it } from "vitest";
import { describeCertificate, parseSubjectAltNames } from "./identity-certificate.js";

describe("parseSubjectAltNames", () => {
  it("splits Node's text, reading quoted values as JSON strings", () => {
    expect(
      parseSubjectAltNames(
        'URI:"spiffe://x/a\\u002c URI:spiffe://evil", DNS:"a\\"b", URI:spiffe://td/ns/x, IP Address:127.0.0.1, email:me@x',
      ),
    ).toEqual([
      { type: "URI", value: "spiffe://x/a, URI:spiffe://evil" },
      { type: "DNS", value: 'a"b' },
      { type: "URI", value: "spiffe://td/ns/x" },
      { type: "IP Address", value: "127.0.0.1" },
      { type: "email", value: "me@x" },
    ]);
    expect(parseSubjectAltNames(undefined)).toEqual([]);
  });
});

describe("describeCertificate", () => {
  const ca = createTestCa();

  it("reads a SAN that smuggles a separator as one name, not two", () => {
    // A URI holding ", URI:" must not pass for a second URI SAN (a second SPIFFE ID).
    const { cert } = ca.issue({ commonName: "a, b", uris: ["spiffe://td/a, URI:spiffe://td/admin"] });
    const described = describeCertificate(new X509Certificate(cert));
    expect(described.uris).toEqual(["spiffe://td/a, URI:spiffe://td/admin"]);
    expect(described.spiffeId).toBe("spiffe://td/a, URI:spiffe://td/admin");
    expect(described.commonName).toBe("a, b");
  });

  it("has no SPIFFE ID when the certificate carries several", () => {
    const { cert } = ca.issue({ commonName: "n", uris: ["spiffe://td/a", "spiffe://td/b", "https://example.com"] });
    const described = describeCertificate(new X509Certificate(cert));
    expect(described.uris).toEqual(["spiffe://td/a", "spiffe://td/b", "https://example.com"]);
    expect(described.spiffeId).toBeUndefined();
  });
});
