// The xDS server `watch` and `list` talk to: `--server host:port` (cleartext; `--delta` for incremental xDS,
// `--node-id`), `--bootstrap <file>`, or the bootstrap the environment names (GRPC_XDS_BOOTSTRAP, then
// GRPC_XDS_BOOTSTRAP_CONFIG), as a gRPC client finds it.
import { readFile } from "node:fs/promises";
import { type Bootstrap, type BootstrapConfig, parseBootstrap } from "@xdskit/xds-client";
import {
  baseDirOf,
  bootstrapFromEnv,
  describeProblem,
  type Env,
  readBootstrap,
  serverBootstrap,
} from "./bootstrap-source.js";
import { CliError, UsageError } from "./command.js";

export interface XdsTarget {
  /** What createXdsClient takes to reach it. */
  readonly clientOptions: { readonly bootstrap?: BootstrapConfig; readonly env: Env };
  readonly bootstrap: Bootstrap;
}

export async function resolveXdsTarget(values: Record<string, unknown>, env: Env): Promise<XdsTarget> {
  const server = values.server as string | undefined;
  const file = values.bootstrap as string | undefined;
  if (server !== undefined && file !== undefined) throw new UsageError("give --bootstrap or --server, not both");
  if (server === undefined) {
    for (const option of ["node-id", "delta"]) {
      if (values[option] !== undefined) throw new UsageError(`--${option} goes with --server`);
    }
  }
  if (server !== undefined) {
    const config = serverBootstrap(server, (values["node-id"] as string | undefined) ?? "xdskit-cli", !!values.delta);
    return { clientOptions: { bootstrap: config, env }, bootstrap: parseBootstrap(config) };
  }
  const fromEnv = file === undefined ? bootstrapFromEnv(env) : { file };
  if (!fromEnv) {
    throw new UsageError("no xDS server: give --server <host:port> or --bootstrap <file>, or set GRPC_XDS_BOOTSTRAP");
  }
  let text: string;
  let source: string;
  let baseDir = ".";
  if ("file" in fromEnv) {
    source = fromEnv.file;
    baseDir = baseDirOf(fromEnv.file);
    text = await readFile(fromEnv.file, "utf8").catch((error: Error) => {
      throw new CliError(`cannot read bootstrap ${fromEnv.file}: ${error.message}`);
    });
  } else {
    source = fromEnv.name;
    text = fromEnv.text;
  }
  const reading = await readBootstrap(text, baseDir);
  if (!reading.ok) {
    throw new CliError(
      `invalid bootstrap ${source}:\n${reading.problems.map((p) => `  ${describeProblem(p)}`).join("\n")}`,
    );
  }
  // Through GRPC_XDS_BOOTSTRAP, the client reads the file and resolves its relative paths from the file's folder.
  const clientEnv = "file" in fromEnv ? { ...env, GRPC_XDS_BOOTSTRAP: fromEnv.file } : env;
  return { clientOptions: { env: clientEnv }, bootstrap: reading.bootstrap };
}
