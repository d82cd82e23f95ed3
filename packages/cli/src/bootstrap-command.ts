// `xdskit bootstrap check [file]`: validates a gRPC xDS bootstrap as @xdskit/xds-client reads it (the file given,
// else GRPC_XDS_BOOTSTRAP, else GRPC_XDS_BOOTSTRAP_CONFIG), and lists every problem: a JSON syntax error by line
// and column, a bad field by its JSON path, a certificate file that cannot be read. `--json` for scripts.
import { readFile } from "node:fs/promises";
import type { Bootstrap, CertificateProviderConfig, XdsServerConfig } from "@xdskit/xds-client";
import {
  type BootstrapProblem,
  baseDirOf,
  bootstrapFromEnv,
  describeProblem,
  readBootstrap,
} from "./bootstrap-source.js";
import { CliError, type CommandRun, ExitCode, UsageError } from "./command.js";

function describeServer(server: XdsServerConfig): string {
  const features = server.serverFeatures.length > 0 ? ` [${server.serverFeatures.join(", ")}]` : "";
  const api = server.apiType === "DELTA_GRPC" ? ", delta" : "";
  return `${server.serverUri} (${server.channelCredentials.type}${api})${features}`;
}

function summary(bootstrap: Bootstrap): string[] {
  const lines = [
    `node: ${bootstrap.node.id || "(no id)"}${bootstrap.node.cluster ? `, cluster ${bootstrap.node.cluster}` : ""}`,
    ...bootstrap.xdsServers.map((server, i) => `xds_servers[${i}]: ${describeServer(server)}`),
  ];
  for (const authority of bootstrap.authorities.values()) {
    const servers = authority.xdsServers?.map(describeServer).join("; ") ?? "the top-level xds_servers";
    lines.push(`authority ${authority.name}: ${servers}`);
  }
  if (bootstrap.serverListenerResourceNameTemplate !== undefined) {
    lines.push(`server listener template: ${bootstrap.serverListenerResourceNameTemplate}`);
  }
  for (const [name, provider] of bootstrap.certificateProviders) {
    lines.push(`certificate provider ${name}: ${describeProvider(provider)}`);
  }
  return lines;
}

function describeProvider(provider: CertificateProviderConfig): string {
  const config = provider.fileWatcher;
  const parts: string[] = [];
  if (config.certificateFile !== undefined) {
    parts.push(`identity ${config.certificateFile} with key ${config.privateKeyFile}`);
  }
  if (config.caCertificateFile !== undefined) parts.push(`roots ${config.caCertificateFile}`);
  return `${provider.pluginName}, ${parts.join(", ")}, read every ${config.refreshIntervalMs / 1000} s`;
}

function providerJson(provider: CertificateProviderConfig) {
  const config = provider.fileWatcher;
  return {
    plugin_name: provider.pluginName,
    ...(config.certificateFile === undefined ? {} : { certificate_file: config.certificateFile }),
    ...(config.privateKeyFile === undefined ? {} : { private_key_file: config.privateKeyFile }),
    ...(config.caCertificateFile === undefined ? {} : { ca_certificate_file: config.caCertificateFile }),
    refresh_interval_ms: config.refreshIntervalMs,
  };
}

function serverJson(server: XdsServerConfig) {
  return {
    server_uri: server.serverUri,
    channel_creds: server.channelCredentials.type,
    api_type: server.apiType,
    server_features: server.serverFeatures,
  };
}

/** The JSON `--json` prints: `{ source, valid, problems: [{ path, message, line?, column? }], node?, ... }`. */
function asJson(source: string, bootstrap: Bootstrap | undefined, problems: readonly BootstrapProblem[]): string {
  const details = bootstrap
    ? {
        node: { id: bootstrap.node.id, cluster: bootstrap.node.cluster },
        xds_servers: bootstrap.xdsServers.map(serverJson),
        authorities: Object.fromEntries(
          [...bootstrap.authorities.values()].map((a) => [
            a.name,
            { xds_servers: a.xdsServers?.map(serverJson) ?? null },
          ]),
        ),
        certificate_providers: [...bootstrap.certificateProviders.keys()],
        certificate_provider_configs: Object.fromEntries(
          [...bootstrap.certificateProviders].map(([name, provider]) => [name, providerJson(provider)]),
        ),
        server_listener_resource_name_template: bootstrap.serverListenerResourceNameTemplate ?? null,
      }
    : {};
  return `${JSON.stringify({ source, valid: problems.length === 0, problems, ...details }, null, 2)}\n`;
}

/** The bootstrap text to check and what to call it, from the argument or the environment. */
async function bootstrapText(file: string | undefined, env: Readonly<Record<string, string | undefined>>) {
  const found = file === undefined ? bootstrapFromEnv(env) : { file };
  if (!found) throw new UsageError("expected a <file>, or GRPC_XDS_BOOTSTRAP or GRPC_XDS_BOOTSTRAP_CONFIG set");
  if (!("file" in found)) return { source: found.name, text: found.text, baseDir: "." };
  const text = await readFile(found.file, "utf8").catch((error: Error) => {
    throw new CliError(`cannot read ${found.file}: ${error.message}`);
  });
  return { source: found.file, text, baseDir: baseDirOf(found.file) };
}

export const run: CommandRun = async (positionals, values, io) => {
  if (positionals.length > 1) throw new UsageError("expected at most one <file>");
  const { source, text, baseDir } = await bootstrapText(positionals[0], io.env);
  const reading = await readBootstrap(text, baseDir);
  const problems = reading.ok ? [] : reading.problems;
  if (values.json) io.stdout(asJson(source, reading.ok ? reading.bootstrap : undefined, problems));
  else if (reading.ok)
    io.stdout(
      `${source}: valid\n${summary(reading.bootstrap)
        .map((l) => `  ${l}\n`)
        .join("")}`,
    );
  else {
    io.stdout(`${source}: ${problems.length} problem${problems.length === 1 ? "" : "s"}\n`);
    for (const problem of problems) io.stdout(`  ${describeProblem(problem)}\n`);
  }
  return reading.ok ? ExitCode.ok : ExitCode.failure;
};
