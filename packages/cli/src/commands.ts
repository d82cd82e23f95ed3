// The commands' help texts and options, and where each one's code lives: loaded only when it runs, so `--help`
// and usage errors answer without loading the xDS libraries.
import type { CommandSpec } from "./command.js";
import { RELAY_USAGE } from "./relay-usage.js";

const CSDS_USAGE = `Usage: xdskit csds <address> [options]

Asks the CSDS service (envoy.service.status.v3.ClientStatusDiscoveryService) at <address> for the config of every
xDS client it reports, and prints one table per client: type, name, status, version, last error.
<address> is host:port or http://host:port (cleartext HTTP/2).

Options:
  --json              print the ClientStatusResponse as proto JSON instead
  --watch             ask again every --interval-ms and print whenever the answer changes, until Ctrl-C
  --interval-ms <n>   default 1000
  --timeout-ms <n>    deadline of each request, default 5000
  -h, --help
`;

const BOOTSTRAP_CHECK_USAGE = `Usage: xdskit bootstrap check <file>

Validates a gRPC xDS bootstrap (JSON) as @xdskit/xds-client reads it. Prints a summary and exits 0 when it is
valid; otherwise prints every problem with the JSON path of its field and exits 1.

Options:
  -h, --help
`;

const WATCH_USAGE = `Usage: xdskit watch <type> <name>... [options]

Subscribes to xDS resources the way an xDS client does (ACK/NACK, validation, does-not-exist timer) and prints each
update and error as it arrives, until Ctrl-C or --count events.
<type> is lds, rds, cds, eds, or a full type URL (type.googleapis.com/<message>) or message name known to xdskit.

Options:
  --bootstrap <file>  the gRPC xDS bootstrap (default: GRPC_XDS_BOOTSTRAP, then GRPC_XDS_BOOTSTRAP_CONFIG)
  --server <host:port>  instead of a bootstrap: that server, cleartext, state of the world
  --node-id <id>      the node id with --server (default xdskit-cli)
  --json              one JSON object per line: {time, event, type, name, version?, resource?, code?, message?}
  --count <n>         exit 0 after n events
  -h, --help

Events: "resource" (a valid update), "error" (the resource is gone or unusable: does not exist, NACKed with nothing
cached, unreachable server...), "ambient_error" (a problem that leaves the last resource in force).
`;

const SERVE_USAGE = `Usage: xdskit serve <dir> [options]

Serves the xDS resources in <dir> (subfolders included) over ADS, state of the world and delta, and reloads them
when a file changes. Files are .json, .yaml or .yml, each holding one resource, a list, or (YAML) several
documents, in proto JSON with "@type":

  {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "echo", "type": "EDS",
   "edsClusterConfig": {"edsConfig": {"ads": {}}}}

A reload with any bad file keeps serving the previous resources and prints each problem (file[index]: reason).
Unchanged resources keep their version, so clients see only what changed.

Options:
  --host <host>       default 127.0.0.1
  --port <port>       default 18000 (0: any free port)
  --debounce-ms <n>   wait for the files to settle before reloading, default 100
  --verbose           log the server's requests and responses to stderr
  -h, --help
`;

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
    options: {},
    load: async () => (await import("./bootstrap-command.js")).run,
  },
  watch: {
    summary: "subscribe to resources and print each update and error",
    usage: WATCH_USAGE,
    options: {
      bootstrap: { type: "string" },
      server: { type: "string" },
      "node-id": { type: "string" },
      json: { type: "boolean" },
      count: { type: "string" },
    },
    load: async () => (await import("./watch-command.js")).run,
  },
  serve: {
    summary: "serve the resources of a folder of JSON/YAML files, reloading on change",
    usage: SERVE_USAGE,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "debounce-ms": { type: "string" },
      verbose: { type: "boolean" },
    },
    load: async () => (await import("./serve-command.js")).run,
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
