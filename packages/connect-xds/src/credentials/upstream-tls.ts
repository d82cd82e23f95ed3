// A29 on the client: a cluster's UpstreamTlsContext gives its backend connections TLS (mTLS with an identity), with
// roots and identity from the bootstrap's certificate provider instances, read again for each new connection (a
// rotation applies from the next connection on). Rules (docs/decisions.md#connect-xds-tls-to-backends):
// - with SAN matchers, the server certificate must carry a SAN one of them matches, and its host name is not checked
//   (the SAN matchers replace it, as in gRPC); without any, a certificate the roots verify is accepted;
// - a cluster without UpstreamTlsContext uses the fallback: cleartext unless the application gave TLS options;
// - connections are shared by address and security: two clusters with different TLS never share one.
import * as http2 from "node:http2";
import * as tls from "node:tls";
import {
  type Bootstrap,
  type CertificateProviders,
  compileSanMatcher,
  createCertificateProviders,
  type Logger,
  type StringMatcher,
  type UpstreamTlsConfig,
} from "@xdskit/xds-client";
import type { LbEndpoint } from "../balancer/lb-policy.js";
import type { Dialer } from "../connections/connection.js";
import type { FallbackCredentials, SecurityKey } from "./fallback-credentials.js";

/** How the connections of one cluster are made. Equal keys mean equal TLS: connections may be shared. */
export interface ConnectionSecurity extends SecurityKey {
  readonly dial: Dialer;
}

/** Where a cluster's security rides on its endpoints down to the connection pool, through any LB policy. */
const SECURITY: unique symbol = Symbol("xdskit.connect-xds.security");
type SecuredEndpoint = LbEndpoint & { readonly [SECURITY]?: SecurityKey };

/** The security `withSecurity` put on an endpoint: always a ConnectionSecurity of `createClusterSecurity`. */
export function endpointSecurity(endpoint: LbEndpoint): ConnectionSecurity | undefined {
  return (endpoint as SecuredEndpoint)[SECURITY] as ConnectionSecurity | undefined;
}

export function withSecurity(
  endpoints: readonly LbEndpoint[],
  security: SecurityKey | undefined,
): readonly LbEndpoint[] {
  if (security === undefined) return endpoints;
  return endpoints.map((endpoint): SecuredEndpoint => ({ ...endpoint, [SECURITY]: security }));
}

/** The security of each cluster's connections, for one transport. */
export interface ClusterSecurity {
  /** For a cluster's `security`: its TLS, or the fallback (undefined: cleartext). */
  securityFor(config: UpstreamTlsConfig | undefined): ConnectionSecurity | undefined;
  /** Stops the certificate providers' refresh timers. */
  close(): void;
}

export interface ClusterSecurityOptions {
  readonly bootstrap: Bootstrap;
  readonly logger: Logger;
  /** Default `{ type: "insecure" }`: cleartext. */
  readonly fallback?: FallbackCredentials;
}

function tlsDialer(connect: (host: string, port: number) => tls.TLSSocket): Dialer {
  return (authority, host, port) => {
    let ended = false;
    const session = http2.connect(authority, {
      settings: { enablePush: false },
      createConnection: () => {
        const socket = connect(host, port);
        // A TLS 1.3 server refuses a client certificate after the client's handshake is done: the alert reaches
        // the socket, and Node destroys the session without an 'error' or 'close' event (Node 20), so the
        // connection would wait for its connect deadline. The error is passed on to the session here.
        socket.on("error", (error: Error) =>
          queueMicrotask(() => {
            if (!ended) session.emit("error", error);
          }),
        );
        socket.setNoDelay(true);
        return socket;
      },
    });
    session.on("error", () => {
      ended = true;
    });
    session.on("close", () => {
      ended = true;
    });
    return session;
  };
}

export function createClusterSecurity(options: ClusterSecurityOptions): ClusterSecurity {
  let providers: CertificateProviders | undefined;
  const byKey = new Map<string, ConnectionSecurity>();
  const given = options.fallback;
  const fallback: ConnectionSecurity | undefined =
    given === undefined || given.type === "insecure"
      ? undefined
      : {
          key: "fallback-tls",
          dial: tlsDialer((host, port) =>
            tls.connect({
              host,
              port,
              ALPNProtocols: ["h2"],
              ...(given.caPem === undefined ? {} : { ca: given.caPem }),
              ...(given.certChainPem === undefined ? {} : { cert: given.certChainPem }),
              ...(given.privateKeyPem === undefined ? {} : { key: given.privateKeyPem }),
              ...(given.serverName === undefined ? {} : { servername: given.serverName }),
            }),
          ),
        };

  /** The PEM an instance serves now; throws, naming the instance and its last error, while it has none. */
  function material(instanceName: string, part: "roots" | "identity"): string | { cert: string; key: string } {
    providers ??= createCertificateProviders(options.bootstrap, { logger: options.logger });
    const provider = providers.get(instanceName);
    if (provider === undefined)
      throw new Error(`certificate provider instance "${instanceName}" is not in the bootstrap`);
    const current = provider.current();
    if (part === "roots" && current.roots !== undefined) return current.roots.caPem;
    if (part === "identity" && current.identity !== undefined) {
      return { cert: current.identity.certChainPem, key: current.identity.privateKeyPem };
    }
    const why = provider.lastError === undefined ? "nothing read yet" : provider.lastError;
    throw new Error(
      `certificate provider instance "${instanceName}" has no ${part === "roots" ? "root certificates" : "identity"} (${why})`,
    );
  }

  function build(config: UpstreamTlsConfig, key: string): ConnectionSecurity {
    const sanMatches = compileSanMatcher(config.matchSubjectAltNames);
    const sans = config.matchSubjectAltNames.map(describeMatcher).join(", ");
    const roots = config.caCertificates;
    const identity = config.identityCertificate;
    return {
      key,
      dial: tlsDialer((host, port) => {
        // Read per connection: a rotated identity or CA is used from the next connection on.
        const ca =
          roots.type === "certificate_provider" ? (material(roots.instanceName, "roots") as string) : undefined;
        const own =
          identity === undefined
            ? undefined
            : (material(identity.instanceName, "identity") as { cert: string; key: string });
        return tls.connect({
          host,
          port,
          ALPNProtocols: ["h2"],
          ...(ca === undefined ? {} : { ca }),
          ...(own === undefined ? {} : { cert: own.cert, key: own.key }),
          ...(config.sni === "" ? {} : { servername: config.sni }),
          checkServerIdentity: (_name, certificate) =>
            sanMatches({ subject: "", subjectAltName: certificate.subjectaltname })
              ? undefined
              : new Error(
                  `the server certificate's SANs (${certificate.subjectaltname ?? "none"}) match none of the cluster's match_subject_alt_names (${sans})`,
                ),
        });
      }),
    };
  }

  return {
    securityFor(config) {
      if (config === undefined) return fallback;
      const key = JSON.stringify(config);
      let security = byKey.get(key);
      if (security === undefined) {
        security = build(config, key);
        byKey.set(key, security);
      }
      return security;
    },
    close() {
      providers?.close();
    },
  };
}

function describeMatcher(matcher: StringMatcher): string {
  const value = matcher.type === "safe_regex" ? matcher.regex : matcher.value;
  return `${matcher.type} "${value}"${matcher.ignoreCase ? " ignoring case" : ""}`;
}
