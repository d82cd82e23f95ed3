// Checking PEM material with node:crypto before it is served: every certificate parses, the private key parses, and
// the key is the leaf certificate's. Returns a problem text instead of throwing.
import { createPrivateKey, X509Certificate } from "node:crypto";

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The certificates of a PEM text, parsed; a problem text when there are none or one does not parse. */
export function parseCertificates(pem: string): X509Certificate[] | string {
  const blocks = pem.match(CERTIFICATE_BLOCK);
  if (blocks === null) return "no PEM certificate in it";
  const certificates: X509Certificate[] = [];
  for (let i = 0; i < blocks.length; i++) {
    try {
      certificates.push(new X509Certificate(blocks[i]!));
    } catch (error) {
      return `certificate ${i + 1} does not parse (${(error as Error).message})`;
    }
  }
  return certificates;
}

/**
 * An identity: `certChainPem` holds the leaf first (then any intermediates), `privateKeyPem` the leaf's key. Returns
 * undefined when it is usable, else which part is wrong and why.
 */
export function checkIdentity(
  certChainPem: string,
  privateKeyPem: string,
): { readonly part: "certificate" | "key"; readonly problem: string } | undefined {
  const chain = parseCertificates(certChainPem);
  if (typeof chain === "string") return { part: "certificate", problem: chain };
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch (error) {
    return { part: "key", problem: `the private key does not parse (${(error as Error).message})` };
  }
  if (!chain[0]!.checkPrivateKey(key)) {
    return { part: "key", problem: "the private key is not the certificate's (its public key differs)" };
  }
  return undefined;
}

/** Roots: at least one certificate, each parsing. Undefined when usable, else why not. */
export function checkRoots(caPem: string): string | undefined {
  const roots = parseCertificates(caPem);
  return typeof roots === "string" ? roots : undefined;
}
