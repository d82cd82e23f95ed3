// etcd client URLs as etcd's own client takes them: `host:port`, `http://host:port` or `https://host:port`; several
// separated by commas.

export interface EtcdEndpoint {
  /** `http://host:port` or `https://host:port`. */
  readonly url: string;
  readonly tls: boolean;
}

/**
 * The endpoints of a list (strings, each possibly comma-separated). A bare `host:port` is https when `tls` is set (a CA
 * or client certificate was given), as etcdctl does; a TypeError names an endpoint that is not a URL.
 */
export function parseEndpoints(list: readonly string[], tls: boolean): EtcdEndpoint[] {
  const out: EtcdEndpoint[] = [];
  for (const item of list.flatMap((entry) => entry.split(","))) {
    const text = item.trim();
    if (text === "") continue;
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `${tls ? "https" : "http"}://${text}`;
    let url: URL;
    try {
      url = new URL(withScheme);
    } catch {
      throw new TypeError(`etcd endpoint "${text}" is not host:port or an http(s) URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`etcd endpoint "${text}": the scheme must be http or https`);
    }
    if (url.port === "" || (url.pathname !== "/" && url.pathname !== "")) {
      throw new TypeError(`etcd endpoint "${text}" must name a host and port, e.g. 127.0.0.1:2379`);
    }
    out.push({ url: `${url.protocol}//${url.host}`, tls: url.protocol === "https:" });
  }
  if (out.length === 0) throw new TypeError("no etcd endpoint given");
  return out;
}
