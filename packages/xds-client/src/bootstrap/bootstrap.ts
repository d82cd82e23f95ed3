// gRPC's JSON bootstrap (A27, A47, A67 draft, A71), parsed into a frozen Bootstrap. Every problem is reported with
// the JSON path of the field, and all problems are reported at once.
import { readFileSync } from "node:fs";
import { parseResourceName } from "../shared/resource-name.js";
import { StatusCode, XdsError } from "../shared/xds-error.js";
import { parseCertificateProviders } from "./bootstrap-certificate-providers.js";
import { parseNode } from "./bootstrap-node.js";
import type {
  AuthorityConfig,
  Bootstrap,
  CertificateProviderConfig,
  ChannelCredentialsConfig,
  XdsServerConfig,
} from "./bootstrap-types.js";
import { type Json, Reader } from "./json-reader.js";
import { parseServerTarget } from "./server-target.js";

/** Server features this client acts on; others are kept but ignored. */
export const KNOWN_SERVER_FEATURES = [
  "ignore_resource_deletion",
  "fail_on_data_errors",
  "resource_timer_is_transient_error",
  "trusted_xds_server",
] as const;

/** Thrown for a malformed bootstrap; `problems` lists each one with its JSON path. */
export class BootstrapError extends XdsError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[], cause?: unknown) {
    super(
      StatusCode.INVALID_ARGUMENT,
      "invalid_options",
      `invalid xDS bootstrap: ${problems.join("; ")}`,
      cause === undefined ? {} : { cause },
    );
    this.problems = problems;
  }
}

function parseChannelCredentials(
  r: Reader,
  value: Json,
  path: string,
  baseDir: string | undefined,
): ChannelCredentialsConfig | undefined {
  const list = r.array(value, path);
  if (!list) return undefined;
  // The first entry of a type this client supports wins; others are skipped, as gRPC does.
  for (let i = 0; i < list.length; i++) {
    const entryPath = `${path}[${i}]`;
    const entry = r.object(list[i], entryPath);
    if (!entry) return undefined;
    const type = r.requiredString(entry, "type", `${entryPath}.type`);
    if (type === "insecure") return { type: "insecure" };
    if (type === "tls") {
      const config = entry.config === undefined ? {} : r.object(entry.config, `${entryPath}.config`);
      if (!config) return undefined;
      const file = (key: string) => {
        const v = r.optionalString(config, key, `${entryPath}.config`);
        return v === undefined ? undefined : resolvePath(v, baseDir);
      };
      const ca = file("ca_certificate_file");
      const cert = file("certificate_file");
      const key = file("private_key_file");
      if ((cert === undefined) !== (key === undefined)) {
        r.problem(`${entryPath}.config`, "certificate_file and private_key_file must be set together");
      }
      return {
        type: "tls",
        ...(ca === undefined ? {} : { caCertificateFile: ca }),
        ...(cert === undefined ? {} : { certificateFile: cert }),
        ...(key === undefined ? {} : { privateKeyFile: key }),
      };
    }
  }
  r.problem(path, "no supported channel credentials (supported: insecure, tls)");
  return undefined;
}

function resolvePath(path: string, baseDir: string | undefined): string {
  if (baseDir === undefined || path.startsWith("/")) return path;
  return `${baseDir}/${path}`;
}

/** `emptyAllowed`: an authority's empty list means "the top-level servers", as in gRPC. */
function parseServers(
  r: Reader,
  value: Json,
  path: string,
  baseDir: string | undefined,
  emptyAllowed = false,
): XdsServerConfig[] {
  const list = r.array(value, path);
  if (!list) return [];
  if (list.length === 0 && !emptyAllowed) r.problem(path, "must hold at least one server");
  const servers: XdsServerConfig[] = [];
  list.forEach((item, i) => {
    const serverPath = `${path}[${i}]`;
    const server = r.object(item, serverPath);
    if (!server) return;
    let serverUri = r.requiredString(server, "server_uri", `${serverPath}.server_uri`);
    if (serverUri !== undefined) {
      const target = parseServerTarget(serverUri);
      if (!target.ok) {
        r.problem(`${serverPath}.server_uri`, target.error);
        serverUri = undefined;
      }
    }
    const creds = r.required(server, "channel_creds", `${serverPath}.channel_creds`);
    const channelCredentials =
      creds === undefined ? undefined : parseChannelCredentials(r, creds, `${serverPath}.channel_creds`, baseDir);
    const features: string[] = [];
    if (server.server_features !== undefined) {
      const list = r.array(server.server_features, `${serverPath}.server_features`) ?? [];
      list.forEach((f, j) => {
        const s = r.string(f, `${serverPath}.server_features[${j}]`);
        if (s !== undefined) features.push(s);
      });
    }
    let apiType: "GRPC" | "DELTA_GRPC" = "GRPC";
    if (server.api_type !== undefined) {
      const t = r.string(server.api_type, `${serverPath}.api_type`);
      if (t === "DELTA_GRPC" || t === "GRPC") apiType = t;
      else if (t !== undefined) r.problem(`${serverPath}.api_type`, `must be "GRPC" or "DELTA_GRPC", got "${t}"`);
    }
    if (serverUri === undefined || channelCredentials === undefined) return;
    const known = features.filter((f) => (KNOWN_SERVER_FEATURES as readonly string[]).includes(f)).sort();
    servers.push(
      Object.freeze({
        serverUri,
        channelCredentials: Object.freeze(channelCredentials),
        serverFeatures: Object.freeze(features),
        apiType,
        ignoreResourceDeletion: features.includes("ignore_resource_deletion"),
        failOnDataErrors: features.includes("fail_on_data_errors"),
        resourceTimerIsTransientError: features.includes("resource_timer_is_transient_error"),
        trustedXdsServer: features.includes("trusted_xds_server"),
        key: JSON.stringify([serverUri, channelCredentials, apiType, known]),
      }),
    );
  });
  return servers;
}

const LISTENER_TYPE = "envoy.config.listener.v3.Listener";

/**
 * A36/A47: the template must be usable once `%s` is filled in. An `xdstp:` template must name a Listener of an
 * authority the bootstrap lists (unchecked when federation is off: `authorities` is then undefined, and a server
 * watching such a name gets the watch's own error).
 */
function checkServerListenerTemplate(
  r: Reader,
  template: string,
  authorities: ReadonlyMap<string, AuthorityConfig> | undefined,
): void {
  const path = "server_listener_resource_name_template";
  if (template === "") {
    r.problem(path, "must not be empty");
    return;
  }
  if (!template.startsWith("xdstp:")) return;
  if (authorities === undefined) return;
  const parsed = parseResourceName(template.replaceAll("%s", "0.0.0.0:0"), LISTENER_TYPE);
  if (!parsed.ok) {
    r.problem(path, parsed.error.replace(/, watched as .*$/, ` (expected ${LISTENER_TYPE})`));
    return;
  }
  if (!authorities.has(parsed.authority)) {
    r.problem(path, `authority "${parsed.authority}" is not in authorities`);
  }
}

export interface ParseBootstrapOptions {
  /** Where relative certificate paths are resolved from (the bootstrap file's directory). */
  readonly baseDir?: string;
  /** A47: when off, `authorities` and the listener templates are ignored. Default on. */
  readonly federation?: boolean;
  /** A67: when off, `dynamic_parameters` is ignored. Default on. */
  readonly dynamicParameters?: boolean;
}

/** Validates a bootstrap given as parsed JSON. Throws BootstrapError naming every bad field. */
export function parseBootstrap(json: unknown, options: ParseBootstrapOptions = {}): Bootstrap {
  const r = new Reader();
  const root = r.object(json, "$") ?? {};
  const federation = options.federation ?? true;
  const dynamicParametersOn = options.dynamicParameters ?? true;
  const serversJson = r.required(root, "xds_servers", "xds_servers");
  const xdsServers = serversJson === undefined ? [] : parseServers(r, serversJson, "xds_servers", options.baseDir);
  const node = parseNode(r, root.node);
  const dynamicParameters =
    dynamicParametersOn && root.dynamic_parameters !== undefined
      ? r.stringMap(root.dynamic_parameters, "dynamic_parameters")
      : Object.freeze({});
  const clientDefaultListenerResourceNameTemplate =
    (federation ? r.optionalString(root, "client_default_listener_resource_name_template", "$") : undefined) ?? "%s";
  const serverListenerResourceNameTemplate = r.optionalString(root, "server_listener_resource_name_template", "$");
  const authorities = new Map<string, AuthorityConfig>();
  if (federation && root.authorities !== undefined) {
    const map = r.object(root.authorities, "authorities") ?? {};
    for (const [name, raw] of Object.entries(map)) {
      const path = `authorities.${name}`;
      const entry = r.object(raw, path);
      if (!entry) continue;
      const template =
        r.optionalString(entry, "client_listener_resource_name_template", path) ??
        `xdstp://${name}/envoy.config.listener.v3.Listener/%s`;
      if (!template.startsWith(`xdstp://${name}/`)) {
        r.problem(`${path}.client_listener_resource_name_template`, `must start with "xdstp://${name}/"`);
      }
      const servers =
        entry.xds_servers === undefined
          ? undefined
          : parseServers(r, entry.xds_servers, `${path}.xds_servers`, options.baseDir, true);
      const params =
        dynamicParametersOn && entry.dynamic_parameters !== undefined
          ? r.stringMap(entry.dynamic_parameters, `${path}.dynamic_parameters`)
          : Object.freeze({});
      authorities.set(
        name,
        Object.freeze({
          name,
          clientListenerResourceNameTemplate: template,
          ...(servers === undefined || servers.length === 0 ? {} : { xdsServers: Object.freeze(servers) }),
          dynamicParameters: params,
        }),
      );
    }
  }
  const certificateProviders =
    root.certificate_providers === undefined
      ? new Map<string, CertificateProviderConfig>()
      : parseCertificateProviders(r, root.certificate_providers, options.baseDir);
  if (serverListenerResourceNameTemplate !== undefined) {
    checkServerListenerTemplate(r, serverListenerResourceNameTemplate, federation ? authorities : undefined);
  }
  if (r.problems.length > 0) throw new BootstrapError(r.problems);
  return Object.freeze({
    xdsServers: Object.freeze(xdsServers),
    node,
    authorities,
    dynamicParameters,
    clientDefaultListenerResourceNameTemplate,
    ...(serverListenerResourceNameTemplate === undefined ? {} : { serverListenerResourceNameTemplate }),
    certificateProviders,
  });
}

/** Parses bootstrap JSON text; a syntax error is a BootstrapError too. */
export function parseBootstrapText(text: string, options: ParseBootstrapOptions = {}): Bootstrap {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new BootstrapError([`$: not valid JSON (${(error as Error).message})`], error);
  }
  return parseBootstrap(json, options);
}

/**
 * The bootstrap from, in order: the explicit option (object or JSON text), the file named by `GRPC_XDS_BOOTSTRAP`,
 * the JSON in `GRPC_XDS_BOOTSTRAP_CONFIG`.
 */
export function loadBootstrap(
  explicit: unknown,
  env: Readonly<Record<string, string | undefined>>,
  options: ParseBootstrapOptions = {},
): Bootstrap {
  if (explicit !== undefined) {
    return typeof explicit === "string" ? parseBootstrapText(explicit, options) : parseBootstrap(explicit, options);
  }
  const file = env.GRPC_XDS_BOOTSTRAP;
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new BootstrapError([`GRPC_XDS_BOOTSTRAP: cannot read ${file} (${(error as Error).message})`], error);
    }
    const slash = file.lastIndexOf("/");
    return parseBootstrapText(text, { ...options, baseDir: slash < 0 ? "." : file.slice(0, slash) });
  }
  const inline = env.GRPC_XDS_BOOTSTRAP_CONFIG;
  if (inline) return parseBootstrapText(inline, options);
  throw new BootstrapError([
    "no bootstrap: pass the `bootstrap` option or set GRPC_XDS_BOOTSTRAP (a file) or GRPC_XDS_BOOTSTRAP_CONFIG (JSON)",
  ]);
}
