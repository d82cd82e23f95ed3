// `xdskit relay --upstream <host:port>`: a TP2 caching xDS relay (@xdskit/xds-relay) between xDS clients and an
// upstream server, until Ctrl-C. It says whether the upstream can be reached and which upstream streams are open.
import { readFile } from "node:fs/promises";
import type { BootstrapConfig } from "@xdskit/xds-client";
import { createXdsRelay, type UpstreamStreamInfo, type XdsRelay } from "@xdskit/xds-relay";
import { aborted, CliError, type CliIo, type CommandRun, ExitCode, UsageError } from "./command.js";
import { shortTypeName } from "./resource-diff.js";
import { stderrLogger } from "./stderr-log.js";

/** `host:port`, `[v6]:port` or `:port`, as a listen address. */
function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || !Number.isInteger(port) || port > 65535) {
    throw new UsageError(`--listen must be host:port, got "${text}"`);
  }
  return { host: match[1] ?? (match[2] || "127.0.0.1"), port };
}

/**
 * The upstream's server_uri: `host:port`, or replicas of one control plane as IP addresses separated by commas, which
 * become gRPC's address-list target (`ipv4:a:1,b:2`), tried in turn (docs/decisions.md#replicas-in-a-bootstrap).
 */
function upstreamUri(text: string): string {
  const parts = text.split(",");
  if (parts.length === 1) {
    if (!/^[^\s/]+:\d+$/.test(text)) throw new UsageError(`--upstream must be host:port, got "${text}"`);
    return text;
  }
  if (parts.every((p) => /^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(p))) return `ipv4:${text}`;
  if (parts.every((p) => /^\[[0-9a-fA-F:.]+\]:\d+$/.test(p))) return `ipv6:${text}`;
  throw new UsageError(
    `--upstream with several replicas takes IP addresses of one family (10.0.0.1:18000,10.0.0.2:18000), got "${text}"; name replicas behind one DNS name otherwise`,
  );
}

async function upstreamBootstrap(values: Record<string, string | boolean | undefined>): Promise<BootstrapConfig> {
  const file = values.bootstrap as string | undefined;
  const upstream = values.upstream as string | undefined;
  if (file !== undefined) {
    if (upstream !== undefined) throw new UsageError("--bootstrap and --upstream exclude each other");
    try {
      return JSON.parse(await readFile(file, "utf8")) as BootstrapConfig;
    } catch (error) {
      throw new CliError(`cannot read the bootstrap ${file}: ${(error as Error).message}`);
    }
  }
  if (upstream === undefined) throw new UsageError("expected --upstream <host:port> (or --bootstrap <file>)");
  const serverUri = upstreamUri(upstream);
  const ca = values["upstream-ca"] as string | undefined;
  const cert = values["upstream-cert"] as string | undefined;
  const key = values["upstream-key"] as string | undefined;
  if ((cert === undefined) !== (key === undefined))
    throw new UsageError("--upstream-cert and --upstream-key go together");
  if (cert !== undefined && ca === undefined) throw new UsageError("--upstream-cert needs --upstream-ca");
  const creds =
    ca === undefined
      ? { type: "insecure" }
      : {
          type: "tls",
          config: {
            ca_certificate_file: ca,
            ...(cert === undefined ? {} : { certificate_file: cert, private_key_file: key }),
          },
        };
  return {
    xds_servers: [
      {
        server_uri: serverUri,
        channel_creds: [creds],
        ...(values["upstream-delta"] ? { api_type: "DELTA_GRPC" } : {}),
      },
    ],
    node: { id: (values["node-id"] as string | undefined) ?? "xdskit-relay" },
  } as BootstrapConfig;
}

function tlsOptions(values: Record<string, string | boolean | undefined>) {
  const certFile = values["tls-cert"] as string | undefined;
  const keyFile = values["tls-key"] as string | undefined;
  const caFile = values["tls-ca"] as string | undefined;
  if ((certFile === undefined) !== (keyFile === undefined))
    throw new UsageError("--tls-cert and --tls-key go together");
  if (caFile !== undefined && certFile === undefined) throw new UsageError("--tls-ca needs --tls-cert and --tls-key");
  return certFile === undefined || keyFile === undefined
    ? undefined
    : { certFile, keyFile, ...(caFile === undefined ? {} : { caFile }) };
}

/** `{k=v,...}` for a wildcard's parameters, "" for none. */
function paramsText(params: Readonly<Record<string, string>>): string {
  const keys = Object.keys(params).sort();
  return keys.length === 0 ? "" : `{${keys.map((k) => `${k}=${params[k]}`).join(",")}}`;
}

/** One upstream stream as a line: its node, then per type its wildcards and how many names it subscribes to. */
export function upstreamStreamText(stream: UpstreamStreamInfo): string {
  const types = [...stream.types]
    .sort((a, b) => a.typeUrl.localeCompare(b.typeUrl))
    .map((type) => {
      const parts = [
        ...type.wildcards.map((params) => `*${paramsText(params)}`),
        ...(type.names > 0 ? [`${type.names} name${type.names === 1 ? "" : "s"}`] : []),
      ];
      return `${shortTypeName(type.typeUrl.slice(type.typeUrl.lastIndexOf("/") + 1))} ${parts.join(" + ")}`;
    });
  const who = stream.shared
    ? `node "${stream.nodeId}" (the relay's, shared)`
    : `node "${stream.nodeId}" (its own resources)`;
  return `${who}: ${types.join("; ") || "nothing"}`;
}

/** How often the upstream streams are looked at for what changed (at most one line per stream per look). */
const STREAMS_POLL_MS = 1_000;

/**
 * What an operator sees without --verbose: whether the upstream can be reached (at start, and each time that
 * changes), and the upstream streams open (per node, type, wildcard parameters), a line for each that opens, changes
 * or closes.
 */
function reportUpstream(relay: XdsRelay, io: CliIo): () => void {
  const say = (text: string) => io.stdout(`${new Date().toISOString()} ${text}\n`);
  const stopState = relay.onUpstreamState((event) => {
    if (event.state === "reachable") say(`upstream ${event.server} reachable`);
    else say(`upstream ${event.server} unreachable${event.detail ? `: ${event.detail}` : ""}`);
  });
  let last = new Map<string, string>();
  const look = () => {
    const now = new Map(relay.upstreamStreams().map((stream) => [stream.nodeId, upstreamStreamText(stream)]));
    for (const [node, text] of now) if (last.get(node) !== text) say(`upstream stream of ${text}`);
    for (const node of last.keys()) if (!now.has(node)) say(`upstream stream of node "${node}" closed`);
    last = now;
  };
  const timer = setInterval(look, STREAMS_POLL_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    stopState();
  };
}

export const run: CommandRun = async (positionals, values, io) => {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const { host, port } = parseListen((values.listen as string | undefined) ?? "127.0.0.1:18001");
  const bootstrap = await upstreamBootstrap(values);
  const tls = tlsOptions(values);
  let relay: XdsRelay;
  try {
    relay = await createXdsRelay({
      host,
      port,
      historyLimit: 0,
      ...(tls ? { tls } : {}),
      ...(values.verbose ? { logger: stderrLogger(io) } : {}),
      upstream: { bootstrap, env: io.env },
    });
  } catch (error) {
    throw new CliError(`cannot start the relay: ${(error as Error).message}`);
  }
  const upstreams = relay.client.bootstrap.xdsServers.map((s) => s.serverUri).join(", ");
  io.stdout(`relaying ${upstreams} on ${relay.address}${tls ? " (TLS)" : ""}\n`);
  const stopReporting = reportUpstream(relay, io);
  await aborted(io.signal);
  io.stdout(`${new Date().toISOString()} stopping (Ctrl-C)\n`);
  stopReporting();
  await relay.close();
  io.stdout(`${new Date().toISOString()} stopped\n`);
  return ExitCode.ok;
};
