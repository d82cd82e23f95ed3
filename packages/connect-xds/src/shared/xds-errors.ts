// How xDS errors read in the transport's call errors and logs: the resource named by its type as users know it
// (`xDS Cluster "nope"`, `xDS ClusterLoadAssignment "nope"`), the client's detail without its status prefix (calls
// fail UNAVAILABLE whatever the xDS code, A88), and the xDS node ID once.
import type { XdsError } from "@xdskit/xds-client";

/** `Cluster` for `type.googleapis.com/envoy.config.cluster.v3.Cluster`: the message name of a type URL. */
export function resourceTypeName(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf(".") + 1);
}

/** `xDS Cluster "nope"`. */
export function resourceLabel(typeUrl: string, name: string): string {
  return `xDS ${resourceTypeName(typeUrl)} "${name}"`;
}

/** Appends the xDS node ID, the one thing a user needs to find this client on the control plane. */
export function withNodeId(message: string, nodeId: string): string {
  return `${message} (xDS node ID "${nodeId}")`;
}

/**
 * `xDS Cluster "nope" does not exist (server: no such cluster)`: the error's detail with its resource named by
 * type; without the node ID (`withNodeId` adds it once).
 */
export function describeXdsError(error: XdsError): string {
  const resource = error.resource;
  if (resource === undefined) return error.detail;
  const label = resourceLabel(resource.typeUrl, resource.name);
  const detail = error.detail;
  const own = `resource ${resource.name}`;
  if (detail.startsWith(`${own} `)) return `${label}${detail.slice(own.length)}`;
  const invalid = `invalid ${own}: `;
  if (detail.startsWith(invalid)) return `${label} is invalid: ${detail.slice(invalid.length)}`;
  return `${label}: ${detail}`;
}

/** The kinds of error a client logs itself (its ADS failures and NACKs). */
const CLIENT_LOGGED = new Set<XdsError["kind"]>(["connection", "nacked"]);

/**
 * The transport's log of ambient errors (A88: calls keep the last good configuration). One ADS failure reaches every
 * watcher of the transport (its Listener, its RouteConfiguration), so an error whose code and detail were logged in
 * the same turn of the event loop is not logged again. A client the transport made logs its own ADS failures and
 * NACKs with the same logger: with `clientLogs`, those are not logged again here.
 */
export function ambientErrorLogger(
  warn: (message: string) => void,
  prefix: string,
  nodeId: string,
  clientLogs: boolean,
): (error: XdsError) => void {
  let seen = new Set<string>();
  let clearing = false;
  return (error) => {
    if (clientLogs && CLIENT_LOGGED.has(error.kind)) return;
    const key = `${error.code} ${error.detail}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (!clearing) {
      clearing = true;
      setImmediate(() => {
        seen = new Set();
        clearing = false;
      });
    }
    const text = error.kind === "connection" ? error.detail : describeXdsError(error);
    warn(`${prefix} ${withNodeId(text, error.nodeId ?? nodeId)}; calls keep the last good configuration`);
  };
}
