// The help text of `xdskit relay` (commands.ts keeps every help text loadable without the command's code).
export const RELAY_USAGE = `Usage: xdskit relay --upstream <host:port> [options]

A TP2 caching xDS relay: serves ADS (state of the world and delta) to xDS clients and fetches what they subscribe
to from the upstream server, once per resource and dynamic-parameter map whatever the number of clients, and once
per type and parameter map for wildcard subscriptions (Envoy's LDS and CDS, xdskit list). While the upstream is
unreachable it keeps serving what it holds. Resources that depend on the client's node (DPDS, anything the upstream
marks do_not_cache) are fetched on an upstream stream of that node and served to it alone. Load reports (LRS) are
forwarded to the upstream with the client's node. CSDS on the same port shows what it holds.

It prints whether the upstream can be reached (at start, and whenever that changes), each upstream stream as it
opens, changes or closes (per node: the types, their wildcards and how many names), and when it stops.

Options:
  --upstream <host:port>   the upstream xDS server (cleartext unless --upstream-ca); replicas of one control plane
                           (xdskit serve --etcd): their IP addresses, comma-separated, tried in turn
  --upstream-delta         speak delta (incremental) xDS to the upstream
  --upstream-ca <file>     TLS to the upstream, trusting this CA (PEM)
  --upstream-cert <file>   with --upstream-key: the relay's client certificate (mTLS)
  --upstream-key <file>
  --node-id <id>           the node the upstream sees (default xdskit-relay)
  --bootstrap <file>       instead of the --upstream options: a gRPC xDS bootstrap for the relay's upstream client
                           (several servers for fallback, authorities, TLS, node)
  --listen <host:port>     where to serve, default 127.0.0.1:18001 (port 0: any free port)
  --tls-cert <file>        with --tls-key: serve TLS with this certificate (PEM; the files are watched)
  --tls-key <file>
  --tls-ca <file>          require client certificates this CA signed (mTLS)
  --verbose                log the relay's requests, responses and upstream events to stderr
  -h, --help
`;
