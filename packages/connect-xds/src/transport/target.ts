// A47: an `xds:` target to the Listener name to watch and the name virtual hosts are matched against.
import type { Bootstrap } from "@xdskit/xds-client";

export interface XdsTarget {
  /** The target as given (the A66 `grpc.target`). */
  readonly target: string;
  /** The LDS resource name. */
  readonly listenerName: string;
  /** The data-plane authority: the target's path without its leading `/` (what virtual host domains match). */
  readonly host: string;
}

/** The pchar characters (RFC 3986 section 3.3) that encodeURIComponent escapes: sub-delims, ':' and '@'. */
const PCHAR_ESCAPES = /%(?:24|26|2B|2C|3A|3B|3D|40)/g;

/**
 * Percent-encodes `name` for an `xdstp:` template (A47): every character a URI path may not hold is encoded
 * (UTF-8), while '/' and the path characters (unreserved, sub-delims, ':' and '@') stay as they are, as C-core and
 * grpc-java do (docs/decisions.md#connect-xds-federation-names).
 */
export function encodeXdstpPath(name: string): string {
  return name
    .split("/")
    .map((segment) => encodeURIComponent(segment).replace(PCHAR_ESCAPES, (encoded) => decodeURIComponent(encoded)))
    .join("/");
}

/** Parses `xds:///name` or `xds://authority/name`; throws a TypeError naming what is wrong. */
export function parseXdsTarget(target: string, bootstrap: Bootstrap): XdsTarget {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new TypeError(`invalid target "${target}": expected xds:///name or xds://authority/name`);
  }
  if (url.protocol !== "xds:") throw new TypeError(`invalid target "${target}": the scheme must be xds`);
  if (url.search !== "" || url.hash !== "") {
    throw new TypeError(`invalid target "${target}": no query or fragment allowed`);
  }
  const path = url.pathname.startsWith("/") ? url.pathname.slice(1) : url.pathname;
  let host: string;
  try {
    host = decodeURIComponent(path);
  } catch {
    throw new TypeError(`invalid target "${target}": malformed percent-encoding`);
  }
  if (host === "") throw new TypeError(`invalid target "${target}": the name is empty`);
  let template = bootstrap.clientDefaultListenerResourceNameTemplate;
  const authority = url.host;
  if (authority !== "") {
    const config = bootstrap.authorities.get(authority);
    if (config === undefined) {
      throw new TypeError(`invalid target "${target}": authority "${authority}" is not in the bootstrap's authorities`);
    }
    template = config.clientListenerResourceNameTemplate;
  }
  const listenerName = template.replaceAll("%s", template.startsWith("xdstp:") ? encodeXdstpPath(host) : host);
  return { target, listenerName, host };
}
