// The commands' help texts and options, and where each one's code lives: loaded only when it runs, so `--help`
// and usage errors answer without loading the xDS libraries.
import type { CommandSpec } from "./command.js";
import { ETCD_OPTIONS, ETCD_USAGE } from "./etcd-usage.js";
import { RELAY_USAGE } from "./relay-usage.js";

const CSDS_USAGE = `Usage: xdskit csds <address> [options]

Asks the CSDS service (envoy.service.status.v3.ClientStatusDiscoveryService) at <address> for the config of every
xDS client it reports, and prints one table per client (per client scope): type, name, status, version, last
error ("<version>: <details>": the version of the response the error came with; "-" when nothing was received).
<address> is host:port or http://host:port (cleartext HTTP/2). \`xdskit serve\` answers CSDS too.

Options:
  --json              print the ClientStatusResponse as proto JSON instead
  --watch             ask again every --interval-ms and print whenever the answer changes, until Ctrl-C
  --interval-ms <n>   default 1000
  --timeout-ms <n>    deadline of each request, default 5000
  -h, --help
`;

const BOOTSTRAP_CHECK_USAGE = `Usage: xdskit bootstrap check [file] [options]

Validates a gRPC xDS bootstrap (JSON) as @xdskit/xds-client reads it: [file], or else the file GRPC_XDS_BOOTSTRAP
names, or else the JSON in GRPC_XDS_BOOTSTRAP_CONFIG. Prints a summary and exits 0 when it is valid; otherwise
prints every problem and exits 1: a JSON syntax error with its line and column, a bad field with its JSON path, a
certificate file (TLS channel credentials, file_watcher certificate providers) that does not exist.

Options:
  --json              one JSON object: {source, valid, problems: [{path, message, line?, column?}], node?, ...}
  -h, --help
`;

const TARGET_OPTIONS = `  --bootstrap <file>  the gRPC xDS bootstrap (default: GRPC_XDS_BOOTSTRAP, then GRPC_XDS_BOOTSTRAP_CONFIG)
  --server <host:port>  instead of a bootstrap: that server, cleartext, state of the world
  --delta             with --server: incremental (delta) xDS
  --node-id <id>      with --server: the node id (default xdskit-cli)`;

const WATCH_USAGE = `Usage: xdskit watch <type> <name>... [options]
       xdskit watch <type> '*' [options]

Subscribes to xDS resources the way an xDS client does (ACK/NACK, validation, does-not-exist timer) and prints each
update and error as it arrives, until Ctrl-C, --count events or --timeout.
<type> is lds, rds, cds, eds, or a full type URL (type.googleapis.com/<message>) or message name known to xdskit.
'*' (quoted) subscribes to every resource of the type (a wildcard) and prints each one as it arrives or changes.

Options:
${TARGET_OPTIONS}
  --json              one JSON object per line: {time, event, name, type, version?, resource?, code?, message?}
  --count <n>         stop after n events
  --timeout <d>       stop after d (500ms, 10s, 2m; a bare number is seconds)
  -h, --help

Events: "resource" (a valid update), "error" (the resource is gone or unusable: does not exist, NACKed with nothing
cached, unreachable server...), "ambient_error" (a problem that leaves the last resource in force).
Exit code: 1 when any event was an error or an ambient error, or when --timeout came before --count events (or
before any event); else 0. Ctrl-C exits 0.
`;

const LIST_USAGE = `Usage: xdskit list <type> [options]

Prints the name of every resource of <type> the xDS server has, one per line, from one wildcard subscription (the
first response answers). <type> as for watch. Invalid resources are named on stderr, with exit code 1.

Options:
${TARGET_OPTIONS}
  --json              the answer as JSON: {type, version, resources: [{name, version, resource} or {name, error}]}
  --timeout <d>       how long to wait for the answer, default 10s
  -h, --help
`;

const SERVE_USAGE = `Usage: xdskit serve <dir> [options]
       xdskit serve --etcd <endpoints> [--prefix /xds] [options]

Serves the xDS resources in <dir> (subfolders included) over ADS, state of the world and delta, and reloads them
when a file changes (also after an atomic save: rename over the file, sed -i, editors). Files are .json, .yaml or
.yml, each holding one resource, a list, or (YAML) several documents, in proto JSON with "@type":

  {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "echo", "type": "EDS",
   "edsClusterConfig": {"edsConfig": {"ads": {}}}}

Each reload prints, with the time, what changed (added, changed, removed per type). A reload with any bad file
keeps serving the previous resources and prints each problem (file[index]: reason; an unknown field by its path in
the resource, with the field names it is close to). Unchanged resources keep their version, so clients see only
what changed. NACKs from clients are printed on stderr.
Every load is checked as a gRPC client would check it: a warning on stderr for each resource a client would NACK
(with the field path of each problem), and for each reference to a resource that is not served (a listener's route
configuration, a route's cluster, a cluster's endpoints); --strict refuses such a load instead.
The same port serves CSDS (each client stream as the server sees it: xdskit csds <address>), gRPC health
(grpc.health.v1.Health) and LRS (the load reports of clusters with lrs_server: self).

With --etcd, it is a replica of a control plane whose resources live under an etcd prefix (written by
\`xdskit apply\`): it reads them at one revision, listens once it has, then follows every change; while etcd is
unreachable it keeps serving what it read. Run several on one prefix and list them all in one server_uri of the
clients' bootstrap (ipv4:10.0.0.1:18000,10.0.0.2:18000, or a DNS name with an address per replica): they serve the
same resources with the same versions, and a client moves to another replica unnoticed.

Options:
  --host <host>       default 127.0.0.1
  --port <port>       default 18000 (0: any free port)
  --tls-cert <file>   serve TLS with this certificate (PEM) and --tls-key; files are reloaded when they change
  --tls-key <file>    the certificate's private key (PEM)
  --tls-ca <file>     mTLS: clients must present a certificate this CA signed
  --debounce-ms <n>   wait for the files to settle before reloading, default 100
  --strict            refuse to serve (at start) or to reload resources a gRPC client would NACK, or that name a
                      resource that is not served; keep serving the previous ones
  --loads             print each load report received (LRS) on stdout: calls, errors, drops and ORCA means per
                      cluster and locality, as a table
  --loads-json        the same as one JSON object per line: {time, streamId, node, clusters: [...]}
  --load-report-interval <d>  how often clients are asked to report load (5s, 1m; gRPC clients report at most
                      once a second), default 10s
  --verbose           on stderr, with the time: every stream opened and closed, request and response, with the
                      client's node id, a line per load report, and the server's info log
${ETCD_USAGE}
  -h, --help
`;

const APPLY_USAGE = `Usage: xdskit apply <folder> --etcd <endpoints> [options]

Writes the resources of <folder> (the files \`xdskit serve <dir>\` reads, checked the same way) to an etcd prefix as
one change: what is new is added, what differs is changed, what the folder no longer has is removed; prints what
it did, per type. A change that fits one etcd transaction (128 operations and 1.5 MiB by default) reaches every
replica whole; a larger one is written in several, endpoints and clusters before the routes and listeners that
use them, removals last. If anyone wrote the prefix after apply read it (another apply), nothing is written and it
says so: run it again.
As serve does, it warns on stderr about each resource a gRPC client would NACK (with the field path of each
problem) and each reference to a resource the folder does not hold; --strict writes nothing then.

Options:
${ETCD_USAGE}
  --strict            write nothing when there is any such warning (exit code 1)
  --dry-run           print what would change, write nothing (and the revision it read)
  --if-revision <n>   write only if nothing under the prefix changed after revision n (the one a reviewed
                      --dry-run printed); otherwise nothing is written and apply says so
  --value-format <f>  binary (default) or json: how values are stored (replicas read both)
  --max-txn-ops <n>   etcd's --max-txn-ops, default 128
  --max-request-bytes <n>  etcd's --max-request-bytes, default 1572864
  -h, --help
`;

const GET_USAGE = `Usage: xdskit get <type> [name] --etcd <endpoints> [options]

Prints the resources of <type> under an etcd prefix (all of them, or the one named) as proto JSON with "@type",
the format \`xdskit apply\` and \`xdskit serve\` read. <type> is lds, rds, cds, eds or a type URL or message name.
A value that does not decode is named on stderr, with exit code 1.

Options:
${ETCD_USAGE}
  --node <id>         the resources served to that node id instead of the default set
  -h, --help
`;

const TARGET: CommandSpec["options"] = {
  bootstrap: { type: "string" },
  server: { type: "string" },
  delta: { type: "boolean" },
  "node-id": { type: "string" },
};

export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  csds: {
    summary: "print the xDS config of the clients behind a CSDS server",
    usage: CSDS_USAGE,
    options: {
      json: { type: "boolean" },
      watch: { type: "boolean" },
      "interval-ms": { type: "string" },
      "timeout-ms": { type: "string" },
    },
    load: async () => (await import("./csds-command.js")).run,
  },
  "bootstrap check": {
    summary: "validate a bootstrap file, naming each bad field",
    usage: BOOTSTRAP_CHECK_USAGE,
    options: { json: { type: "boolean" } },
    load: async () => (await import("./bootstrap-command.js")).run,
  },
  watch: {
    summary: "subscribe to resources (or '*') and print each update and error",
    usage: WATCH_USAGE,
    options: { ...TARGET, json: { type: "boolean" }, count: { type: "string" }, timeout: { type: "string" } },
    load: async () => (await import("./watch-command.js")).run,
  },
  list: {
    summary: "print the names of every resource of a type on a server",
    usage: LIST_USAGE,
    options: { ...TARGET, json: { type: "boolean" }, timeout: { type: "string" } },
    load: async () => (await import("./list-command.js")).run,
  },
  serve: {
    summary: "serve the resources of a folder of JSON/YAML files, reloading on change",
    usage: SERVE_USAGE,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "debounce-ms": { type: "string" },
      strict: { type: "boolean" },
      loads: { type: "boolean" },
      "loads-json": { type: "boolean" },
      "load-report-interval": { type: "string" },
      verbose: { type: "boolean" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "tls-ca": { type: "string" },
      ...ETCD_OPTIONS,
    },
    load: async () => (await import("./serve-command.js")).run,
  },
  apply: {
    summary: "write a folder of resources to an etcd prefix as one change",
    usage: APPLY_USAGE,
    options: {
      ...ETCD_OPTIONS,
      strict: { type: "boolean" },
      "dry-run": { type: "boolean" },
      "if-revision": { type: "string" },
      "value-format": { type: "string" },
      "max-txn-ops": { type: "string" },
      "max-request-bytes": { type: "string" },
    },
    load: async () => (await import("./apply-command.js")).run,
  },
  get: {
    summary: "print the resources of a type under an etcd prefix",
    usage: GET_USAGE,
    options: { ...ETCD_OPTIONS, node: { type: "string" } },
    load: async () => (await import("./get-command.js")).run,
  },
  relay: {
    summary: "a TP2 caching xDS relay between xDS clients and an upstream server",
    usage: RELAY_USAGE,
    options: {
      upstream: { type: "string" },
      "upstream-delta": { type: "boolean" },
      "upstream-ca": { type: "string" },
      "upstream-cert": { type: "string" },
      "upstream-key": { type: "string" },
      "node-id": { type: "string" },
      bootstrap: { type: "string" },
      listen: { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "tls-ca": { type: "string" },
      verbose: { type: "boolean" },
    },
    load: async () => (await import("./relay-command.js")).run,
  },
};
