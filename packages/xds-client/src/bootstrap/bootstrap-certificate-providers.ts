// The bootstrap's `certificate_providers` (A29): each instance's plugin and its config, validated with the rules
// gRPC applies to the `file_watcher` plugin. Problems name the field by its JSON path.
import type { CertificateProviderConfig, FileWatcherConfig } from "./bootstrap-types.js";

/** Where problems go (the bootstrap parser's reader). */
export interface ProblemSink {
  problem(path: string, message: string): void;
}

/** gRPC's default `refresh_interval` for `file_watcher` (grpc-go, C-core): 10 minutes. */
export const DEFAULT_FILE_WATCHER_REFRESH_MS = 600_000;

/** The largest Duration protobuf allows: 10,000 years in seconds. */
const MAX_DURATION_SECONDS = 315_576_000_000;
const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;

/**
 * A proto-JSON Duration (`"600s"`, `"1.5s"`, `"0.000000001s"`) in milliseconds, or a problem text. Negative values and
 * values past protobuf's range are refused; `positive` refuses zero too.
 */
export function parseJsonDurationMs(text: string, positive: boolean): number | string {
  const match = DURATION.exec(text);
  if (match === null) return `"${text}" is not a Duration (decimal seconds with an "s" suffix, e.g. "600s")`;
  const seconds = Number(match[2]);
  const nanos = Number((match[3] ?? "").padEnd(9, "0"));
  if (match[1] !== undefined && (seconds > 0 || nanos > 0)) return `"${text}" is negative`;
  if (seconds > MAX_DURATION_SECONDS) return `"${text}" is more than protobuf's ${MAX_DURATION_SECONDS}s`;
  if (positive && seconds === 0 && nanos === 0) return `"${text}" must be more than zero`;
  return seconds * 1000 + nanos / 1e6;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}

function resolvePath(path: string, baseDir: string | undefined): string {
  if (baseDir === undefined || path.startsWith("/")) return path;
  return `${baseDir}/${path}`;
}

/**
 * `file_watcher`'s config: `certificate_file` and `private_key_file` together or not at all, at least one of them
 * or `ca_certificate_file`, `refresh_interval` a positive Duration (default 10 minutes). Unknown keys are ignored,
 * as gRPC does.
 */
function parseFileWatcher(
  sink: ProblemSink,
  value: unknown,
  path: string,
  baseDir: string | undefined,
): FileWatcherConfig | undefined {
  const config = value === undefined ? {} : value;
  if (!isObject(config)) {
    sink.problem(path, `expected an object, got ${describe(config)}`);
    return undefined;
  }
  let ok = true;
  const file = (key: string): string | undefined => {
    const raw = config[key];
    if (raw === undefined) return undefined;
    if (typeof raw !== "string" || raw === "") {
      sink.problem(`${path}.${key}`, `expected a non-empty string, got ${describe(raw)}`);
      ok = false;
      return undefined;
    }
    return resolvePath(raw, baseDir);
  };
  const certificateFile = file("certificate_file");
  const privateKeyFile = file("private_key_file");
  const caCertificateFile = file("ca_certificate_file");
  if ((config.certificate_file === undefined) !== (config.private_key_file === undefined)) {
    sink.problem(path, "certificate_file and private_key_file must be set together (an identity needs both)");
    ok = false;
  }
  if (config.certificate_file === undefined && config.ca_certificate_file === undefined) {
    sink.problem(path, "at least one of certificate_file (with private_key_file) and ca_certificate_file is required");
    ok = false;
  }
  let refreshIntervalMs = DEFAULT_FILE_WATCHER_REFRESH_MS;
  if (config.refresh_interval !== undefined) {
    const raw = config.refresh_interval;
    const parsed = typeof raw === "string" ? parseJsonDurationMs(raw, true) : `expected a string, got ${describe(raw)}`;
    if (typeof parsed === "string") {
      sink.problem(`${path}.refresh_interval`, parsed);
      ok = false;
    } else {
      refreshIntervalMs = parsed;
    }
  }
  if (!ok) return undefined;
  return Object.freeze({
    ...(certificateFile === undefined ? {} : { certificateFile }),
    ...(privateKeyFile === undefined ? {} : { privateKeyFile }),
    ...(caCertificateFile === undefined ? {} : { caCertificateFile }),
    refreshIntervalMs,
  });
}

/** Reads `certificate_providers` (already known to be present). */
export function parseCertificateProviders(
  sink: ProblemSink,
  value: unknown,
  baseDir: string | undefined,
): Map<string, CertificateProviderConfig> {
  const providers = new Map<string, CertificateProviderConfig>();
  if (!isObject(value)) {
    sink.problem("certificate_providers", `expected an object, got ${describe(value)}`);
    return providers;
  }
  for (const [name, entry] of Object.entries(value)) {
    const path = `certificate_providers.${name}`;
    if (!isObject(entry)) {
      sink.problem(path, `expected an object, got ${describe(entry)}`);
      continue;
    }
    const pluginName = entry.plugin_name;
    if (pluginName === undefined) {
      sink.problem(`${path}.plugin_name`, "is required");
      continue;
    }
    if (typeof pluginName !== "string") {
      sink.problem(`${path}.plugin_name`, `expected a string, got ${describe(pluginName)}`);
      continue;
    }
    if (pluginName !== "file_watcher") {
      sink.problem(`${path}.plugin_name`, `unknown plugin "${pluginName}" (supported: file_watcher)`);
      continue;
    }
    const fileWatcher = parseFileWatcher(sink, entry.config, `${path}.config`, baseDir);
    if (fileWatcher !== undefined) {
      providers.set(name, Object.freeze({ pluginName, config: entry.config, fileWatcher }));
    }
  }
  return providers;
}
