// `xdskit bootstrap check <file>`: validates a gRPC xDS bootstrap file as @xdskit/xds-client reads it, and lists
// every problem with its JSON path.
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { type Bootstrap, BootstrapError, parseBootstrapText, type XdsServerConfig } from "@xdskit/xds-client";
import { CliError, type CommandRun, ExitCode, UsageError } from "./command.js";

function describeServer(server: XdsServerConfig): string {
  const features = server.serverFeatures.length > 0 ? ` [${server.serverFeatures.join(", ")}]` : "";
  const api = server.apiType === "DELTA_GRPC" ? ", delta" : "";
  return `${server.serverUri} (${server.channelCredentials.type}${api})${features}`;
}

function summary(bootstrap: Bootstrap): string {
  const lines = [
    `node: ${bootstrap.node.id || "(no id)"}${bootstrap.node.cluster ? `, cluster ${bootstrap.node.cluster}` : ""}`,
    ...bootstrap.xdsServers.map((server, i) => `xds_servers[${i}]: ${describeServer(server)}`),
  ];
  for (const authority of bootstrap.authorities.values()) {
    const servers = authority.xdsServers?.map(describeServer).join("; ") ?? "the top-level xds_servers";
    lines.push(`authority ${authority.name}: ${servers}`);
  }
  for (const name of bootstrap.certificateProviders.keys()) lines.push(`certificate provider: ${name}`);
  return lines.map((line) => `  ${line}\n`).join("");
}

export const run: CommandRun = async (positionals, _values, io) => {
  if (positionals.length !== 1) throw new UsageError("expected one <file>");
  const file = positionals[0]!;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const bootstrap = parseBootstrapText(text, { baseDir: dirname(file) });
    io.stdout(`${file}: valid\n${summary(bootstrap)}`);
    return ExitCode.ok;
  } catch (error) {
    if (!(error instanceof BootstrapError)) throw error;
    io.stdout(`${file}: ${error.problems.length} problem${error.problems.length === 1 ? "" : "s"}\n`);
    for (const problem of error.problems) io.stdout(`  ${problem}\n`);
    return ExitCode.failure;
  }
};
