// Where a command's bootstrap comes from (a file, GRPC_XDS_BOOTSTRAP, GRPC_XDS_BOOTSTRAP_CONFIG, or --server), and
// reading it with problems people can act on: a JSON syntax error with its line and column, every invalid field by
// its JSON path, and certificate files that cannot be read.
import { access } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import {
  type Bootstrap,
  type BootstrapConfig,
  BootstrapError,
  createCertificateProviders,
  parseBootstrap,
} from "@xdskit/xds-client";

export type Env = Readonly<Record<string, string | undefined>>;

/** One problem: the JSON path of the field (`$` for the whole text), what is wrong, and where for syntax errors. */
export interface BootstrapProblem {
  readonly path: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
}

export function describeProblem(problem: BootstrapProblem): string {
  const where = problem.line === undefined ? problem.path : `line ${problem.line}, column ${problem.column}`;
  return `${where}: ${problem.message}`;
}

/** A JSON.parse error as a problem with line and column (1-based), from the offset Node's message gives. */
export function jsonSyntaxProblem(text: string, error: Error): BootstrapProblem {
  const offset = /at position (\d+)/.exec(error.message)?.[1];
  const at = offset === undefined ? text.length : Number(offset);
  const before = text.slice(0, at).split("\n");
  const message = error.message.replace(/ in JSON at position \d+.*$/, "").replace(/ \(line \d+ column \d+\)$/, "");
  return { path: "$", message: `not valid JSON: ${message}`, line: before.length, column: before.at(-1)!.length + 1 };
}

/** `path: message` as the bootstrap parser words them, split back. */
function splitProblem(text: string): BootstrapProblem {
  const colon = text.indexOf(": ");
  return colon < 0 ? { path: "$", message: text } : { path: text.slice(0, colon), message: text.slice(colon + 2) };
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const CERTIFICATE_FIELDS = ["ca_certificate_file", "certificate_file", "private_key_file"] as const;

/** Every certificate file the bootstrap names (TLS channel credentials, file_watcher providers), by JSON path. */
function certificateFiles(json: Json): { path: string; file: string }[] {
  const found: { path: string; file: string }[] = [];
  const fromConfig = (config: unknown, path: string) => {
    if (!isObject(config)) return;
    for (const field of CERTIFICATE_FIELDS) {
      if (typeof config[field] === "string") found.push({ path: `${path}.${field}`, file: config[field] });
    }
  };
  const fromServers = (servers: unknown, path: string) => {
    if (!Array.isArray(servers)) return;
    servers.forEach((server, i) => {
      if (!isObject(server) || !Array.isArray(server.channel_creds)) return;
      server.channel_creds.forEach((creds, j) => {
        if (isObject(creds) && creds.type === "tls")
          fromConfig(creds.config, `${path}[${i}].channel_creds[${j}].config`);
      });
    });
  };
  fromServers(json.xds_servers, "xds_servers");
  if (isObject(json.authorities)) {
    for (const [name, authority] of Object.entries(json.authorities)) {
      if (isObject(authority)) fromServers(authority.xds_servers, `authorities.${name}.xds_servers`);
    }
  }
  if (isObject(json.certificate_providers)) {
    for (const [name, provider] of Object.entries(json.certificate_providers)) {
      if (isObject(provider)) fromConfig(provider.config, `certificate_providers.${name}.config`);
    }
  }
  return found;
}

async function unreadableFiles(json: Json, baseDir: string): Promise<BootstrapProblem[]> {
  const problems: BootstrapProblem[] = [];
  for (const { path, file } of certificateFiles(json)) {
    const full = resolve(baseDir, file);
    await access(full).catch((error: NodeJS.ErrnoException) => {
      const why = error.code === "ENOENT" ? "does not exist" : `cannot be read (${error.code ?? error.message})`;
      problems.push({ path, message: `${full} ${why}` });
    });
  }
  return problems;
}

/**
 * Each `file_watcher` certificate provider's files read and checked as the provider will (every certificate parses,
 * the key is the certificate's), when every file exists.
 */
function unusableCertificates(bootstrap: Bootstrap): BootstrapProblem[] {
  const problems: BootstrapProblem[] = [];
  const providers = createCertificateProviders(bootstrap);
  try {
    for (const name of providers.names) {
      const error = providers.get(name)?.lastError;
      if (error !== undefined) problems.push({ path: `certificate_providers.${name}.config`, message: error });
    }
  } finally {
    providers.close();
  }
  return problems;
}

export type BootstrapReading =
  | { readonly ok: true; readonly bootstrap: Bootstrap; readonly json: Json }
  | { readonly ok: false; readonly problems: readonly BootstrapProblem[] };

/**
 * Reads bootstrap JSON text as @xdskit/xds-client does (relative paths from `baseDir`) and, when it is valid,
 * checks that its certificate files can be read, then that the certificate providers' files hold usable material.
 */
export async function readBootstrap(text: string, baseDir: string): Promise<BootstrapReading> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [jsonSyntaxProblem(text, error as Error)] };
  }
  try {
    const bootstrap = parseBootstrap(json, { baseDir });
    let problems = await unreadableFiles(json as Json, baseDir);
    if (problems.length === 0) problems = unusableCertificates(bootstrap);
    return problems.length > 0 ? { ok: false, problems } : { ok: true, bootstrap, json: json as Json };
  } catch (error) {
    if (!(error instanceof BootstrapError)) throw error;
    return { ok: false, problems: error.problems.map(splitProblem) };
  }
}

/** Where the bootstrap is when none is given on the command line: as the client finds it. */
export function bootstrapFromEnv(env: Env): { file: string } | { text: string; name: string } | undefined {
  if (env.GRPC_XDS_BOOTSTRAP) return { file: env.GRPC_XDS_BOOTSTRAP };
  if (env.GRPC_XDS_BOOTSTRAP_CONFIG) return { text: env.GRPC_XDS_BOOTSTRAP_CONFIG, name: "GRPC_XDS_BOOTSTRAP_CONFIG" };
  return undefined;
}

/** The bootstrap `--server host:port` stands for: cleartext, SotW (or delta), the given node id. */
export function serverBootstrap(server: string, nodeId: string, delta: boolean): BootstrapConfig {
  return {
    xds_servers: [
      { server_uri: server, channel_creds: [{ type: "insecure" }], ...(delta ? { api_type: "DELTA_GRPC" } : {}) },
    ],
    node: { id: nodeId },
  };
}

export const baseDirOf = (file: string) => dirname(resolve(file));
