import type { X509Certificate } from "node:crypto";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { PeerCertificate, PeerIdentity } from "./identity.js";

/**
 * Subject alternative names as Node prints them: `TYPE:value` joined by `, `, where a value that could be misread
 * (holding a comma, a quote, a control character) is written as a JSON string.
 */
export function parseSubjectAltNames(text: string | undefined): { type: string; value: string }[] {
  const out: { type: string; value: string }[] = [];
  if (!text) return out;
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
    out.push({ type, value });
    i = end + 2;
  }
  return out;
}

function commonNameOf(subject: string): string | undefined {
  let cn: string | undefined;
  for (const line of subject.split("\n")) if (line.startsWith("CN=")) cn = line.slice(3);
  // Node escapes `,`, `+`, `"`, `\\`, `<`, `>`, `;` and `=` in attribute values with a backslash.
  return cn?.replace(/\\(.)/g, "$1");
}

/** What the server shows of a verified certificate. */
export function describeCertificate(x509: X509Certificate): PeerCertificate {
  const uris: string[] = [];
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const { type, value } of parseSubjectAltNames(x509.subjectAltName)) {
    if (type === "URI") uris.push(value);
    else if (type === "DNS") dnsNames.push(value);
    else if (type === "IP Address") ipAddresses.push(value);
  }
  const spiffe = uris.filter((uri) => uri.toLowerCase().startsWith("spiffe://"));
  return Object.freeze({
    subject: x509.subject,
    commonName: commonNameOf(x509.subject),
    issuer: x509.issuer,
    uris: Object.freeze(uris),
    dnsNames: Object.freeze(dnsNames),
    ipAddresses: Object.freeze(ipAddresses),
    spiffeId: spiffe.length === 1 ? spiffe[0] : undefined,
    fingerprint256: x509.fingerprint256,
    serialNumber: x509.serialNumber,
    raw: new Uint8Array(x509.raw),
  });
}

function isTlsSocket(socket: Socket): socket is TLSSocket {
  return typeof (socket as Partial<TLSSocket>).getPeerX509Certificate === "function";
}

/** The identity of the client at the other end of `socket` (a TLS socket: its verified certificate). */
export function peerIdentityOf(socket: Socket): PeerIdentity {
  const address =
    socket.remoteAddress !== undefined ? `${socket.remoteAddress}:${String(socket.remotePort)}` : undefined;
  if (!isTlsSocket(socket)) return { address, tls: false, certificate: undefined, certificateError: undefined };
  const x509 = socket.getPeerX509Certificate();
  if (x509 === undefined) return { address, tls: true, certificate: undefined, certificateError: undefined };
  if (!socket.authorized) {
    const reason = socket.authorizationError;
    return {
      address,
      tls: true,
      certificate: undefined,
      certificateError: reason instanceof Error ? reason.message : String(reason ?? "not verified"),
    };
  }
  return { address, tls: true, certificate: describeCertificate(x509), certificateError: undefined };
}
