// What the mesh runtime reads of a peer's X.509 certificate (node:crypto's X509Certificate, as
// `tlsSocket.getPeerX509Certificate()` gives it): its subject alternative names, its subject as an RFC 2253 name, and
// the principal names RBAC's `authenticated.principal_name` is tested against (A41).

import type { StringMatcher } from "../resources/matchers.js";
import { canonicalIp } from "../shared/ip-address.js";
import { compileStringMatcher } from "./string-match.js";

/**
 * The part of a peer certificate read here: what node:crypto's `X509Certificate` has (so `getPeerX509Certificate()`
 * can be passed as it is), written out so that the package's types do not need Node's.
 */
export interface PeerCertificate {
  /** The subject, one attribute per line, most significant first (Node's form). */
  readonly subject: string;
  /** The SAN extension as Node writes it (`DNS:a.example, URI:spiffe://td/x`), or undefined without one. */
  readonly subjectAltName: string | undefined;
}

/** One subject alternative name, by type: `DNS`, `URI`, `IP Address`, `email` (Node's spelling), or others. */
export interface SubjectAltName {
  readonly type: string;
  readonly value: string;
}

/**
 * Parses Node's text form of the SAN extension (`DNS:a.example, URI:spiffe://td/ns/x, IP Address:10.0.0.1`). A value
 * holding a separator is written as a JSON string by Node (`DNS:"a, b"`): it is one name, never two.
 */
export function parseSubjectAltNames(text: string | undefined): SubjectAltName[] {
  const names: SubjectAltName[] = [];
  if (!text) return names;
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(":", i);
    if (colon < 0) break;
    const type = text.slice(i, colon);
    let value: string;
    let end: number;
    if (text[colon + 1] === '"') {
      end = colon + 2;
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      end += 1;
      try {
        value = JSON.parse(text.slice(colon + 1, end)) as string;
      } catch {
        value = text.slice(colon + 2, end - 1);
      }
    } else {
      end = text.indexOf(", ", colon + 1);
      if (end < 0) end = text.length;
      value = text.slice(colon + 1, end);
    }
    names.push({ type, value });
    i = end + 2;
  }
  return names;
}

/**
 * The subject as an RFC 2253 string: Node lists the attributes one per line, most significant first, with the
 * characters RFC 2253 escapes already backslash-escaped; RFC 2253 writes them least significant first, comma-separated
 * (`CN=client,O=Example,C=US`).
 */
export function rfc2253Subject(certificate: PeerCertificate): string {
  return certificate.subject.split("\n").filter(Boolean).reverse().join(",");
}

const NO_CERTIFICATE: readonly string[] = Object.freeze([""]);

/**
 * The names `authenticated.principal_name` is tested against (A41), for `RbacPeer.principalNames` on a TLS
 * connection: the certificate's URI SANs; if it has none, its DNS SANs; if none, its RFC 2253 subject; without a
 * certificate, `[""]`. Compute it once per connection.
 */
export function principalNamesOf(certificate: PeerCertificate | undefined): readonly string[] {
  if (certificate === undefined) return NO_CERTIFICATE;
  const sans = parseSubjectAltNames(certificate.subjectAltName);
  const uris = sans.filter((san) => san.type === "URI").map((san) => san.value);
  if (uris.length > 0) return Object.freeze(uris);
  const dns = sans.filter((san) => san.type === "DNS").map((san) => san.value);
  if (dns.length > 0) return Object.freeze(dns);
  return Object.freeze([rfc2253Subject(certificate)]);
}

/**
 * A29's check of a server certificate against a cluster's `match_subject_alt_names`: true when there are no matchers,
 * else when one of the certificate's DNS, URI, email or IP SANs matches one of them. An `exact` matcher tested
 * against a DNS SAN follows DNS wildcard rules (a SAN `*.example.com` matches `a.example.com`), as the xDS protos say
 * and gRPC does; IP SANs are compared in canonical form (RFC 5952 for IPv6).
 */
export function compileSanMatcher(matchers: readonly StringMatcher[]): (certificate: PeerCertificate) => boolean {
  if (matchers.length === 0) return () => true;
  const compiled = matchers.map((matcher) => ({ matcher, test: compileStringMatcher(matcher) }));
  const matches = (san: string, isDns: boolean) =>
    compiled.some(({ matcher, test }) =>
      isDns && matcher.type === "exact" ? dnsMatch(matcher.value, san) : test(san),
    );
  return (certificate) => {
    for (const san of parseSubjectAltNames(certificate.subjectAltName)) {
      if (san.type === "DNS" && matches(san.value, true)) return true;
      if ((san.type === "URI" || san.type === "email") && matches(san.value, false)) return true;
      if (san.type === "IP Address" && matches(canonicalIp(san.value) ?? san.value, false)) return true;
    }
    return false;
  };
}

/**
 * Whether DNS SAN `san` (perhaps a wildcard) covers the exact name `name`: case-insensitive (DNS names are), a
 * trailing dot ignored, `*` only as the whole left-most label and standing for exactly one label.
 */
function dnsMatch(name: string, san: string): boolean {
  const host = name.toLowerCase().replace(/\.$/, "");
  const pattern = san.toLowerCase().replace(/\.$/, "");
  if (host === "" || pattern === "") return false;
  if (!pattern.includes("*")) return host === pattern;
  if (!pattern.startsWith("*.") || pattern.indexOf("*", 1) >= 0) return false;
  const suffix = pattern.slice(1);
  if (!host.endsWith(suffix)) return false;
  const label = host.slice(0, host.length - suffix.length);
  return label !== "" && !label.includes(".");
}
