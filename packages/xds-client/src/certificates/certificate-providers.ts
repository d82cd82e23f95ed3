// A29 certificate providers at run time: one CertificateProvider per bootstrap `certificate_providers` instance,
// started when first asked for. `file_watcher` (the one plugin gRPC ships) reads its PEM files at start and every
// `refresh_interval`, checks them (pem-material.ts), and serves the last good identity and roots: a missing,
// unreadable or invalid file is logged and changes nothing, so a rotation caught half-way (a new certificate with the
// old key) keeps the previous identity until the key follows. Listeners hear only real changes.
import { readFileSync } from "node:fs";
import type { Bootstrap, CertificateProviderConfig, FileWatcherConfig } from "../bootstrap/bootstrap-types.js";
import { noopLogger, type ScopedLogger, scopeLogger } from "../observability/logger.js";
import { type Clock, systemClock } from "../shared/clock.js";
import type {
  CertificateIdentity,
  CertificateMaterial,
  CertificateProvider,
  CertificateProviders,
  CertificateProvidersOptions,
  CertificateRoots,
} from "./certificate-provider-types.js";
import { checkIdentity, checkRoots } from "./pem-material.js";

/**
 * Node's timers fire at once past 2^31-1 ms (about 24.8 days): a longer `refresh_interval` is read as this, which
 * only reads the files more often than asked.
 */
export const MAX_REFRESH_TIMER_MS = 2 ** 31 - 1;

const EMPTY_MATERIAL: CertificateMaterial = Object.freeze({});

/** Reads a file as text; a problem text naming the field and file when it cannot. */
function readPem(field: string, path: string): { text: string } | { problem: string } {
  try {
    return { text: readFileSync(path, "utf8") };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: `${field} ${path}: ${code ?? ""}${code ? " " : ""}${(error as Error).message}` };
  }
}

function createFileWatcher(
  instanceName: string,
  config: FileWatcherConfig,
  clock: Clock,
  logger: ScopedLogger,
): CertificateProvider & { close(): void } {
  let identity: CertificateIdentity | undefined;
  let roots: CertificateRoots | undefined;
  let material = EMPTY_MATERIAL;
  let lastError: string | undefined;
  let timer: unknown;
  let closed = false;
  const listeners = new Set<(material: CertificateMaterial) => void>();

  /** The identity read now: the same object when its bytes did not change, or a problem text. */
  function readIdentity(certificateFile: string, privateKeyFile: string): CertificateIdentity | string {
    const cert = readPem("certificate_file", certificateFile);
    if ("problem" in cert) return cert.problem;
    const key = readPem("private_key_file", privateKeyFile);
    if ("problem" in key) return key.problem;
    if (identity !== undefined && identity.certChainPem === cert.text && identity.privateKeyPem === key.text) {
      return identity;
    }
    const invalid = checkIdentity(cert.text, key.text);
    if (invalid !== undefined) {
      const [field, path] =
        invalid.part === "certificate" ? ["certificate_file", certificateFile] : ["private_key_file", privateKeyFile];
      return `${field} ${path}: ${invalid.problem}`;
    }
    return Object.freeze({ certChainPem: cert.text, privateKeyPem: key.text });
  }

  function readRoots(caCertificateFile: string): CertificateRoots | string {
    const ca = readPem("ca_certificate_file", caCertificateFile);
    if ("problem" in ca) return ca.problem;
    if (roots !== undefined && roots.caPem === ca.text) return roots;
    const invalid = checkRoots(ca.text);
    if (invalid !== undefined) return `ca_certificate_file ${caCertificateFile}: ${invalid}`;
    return Object.freeze({ caPem: ca.text });
  }

  function refresh(): boolean {
    if (closed) return false;
    const problems: string[] = [];
    let nextIdentity = identity;
    let nextRoots = roots;
    if (config.certificateFile !== undefined && config.privateKeyFile !== undefined) {
      const read = readIdentity(config.certificateFile, config.privateKeyFile);
      if (typeof read === "string") problems.push(read);
      else nextIdentity = read;
    }
    if (config.caCertificateFile !== undefined) {
      const read = readRoots(config.caCertificateFile);
      if (typeof read === "string") problems.push(read);
      else nextRoots = read;
    }
    const error = problems.length === 0 ? undefined : problems.join("; ");
    if (error !== lastError) {
      if (error !== undefined) {
        const kept =
          identity !== undefined || roots !== undefined ? "keeping the last good material" : "nothing to serve yet";
        logger.error(`cannot use the files: ${error} (${kept})`);
      } else if (lastError !== undefined) {
        logger.info("the files read well again");
      }
      lastError = error;
    }
    if (nextIdentity === identity && nextRoots === roots) return false;
    identity = nextIdentity;
    roots = nextRoots;
    material = Object.freeze({
      ...(identity === undefined ? {} : { identity }),
      ...(roots === undefined ? {} : { roots }),
    });
    const parts = [identity === undefined ? undefined : "identity", roots === undefined ? undefined : "roots"];
    logger.info(`serving new material (${parts.filter(Boolean).join(" and ")})`);
    for (const listener of [...listeners]) {
      try {
        listener(material);
      } catch (error) {
        logger.error(`a listener threw: ${(error as Error).message}`);
      }
    }
    return true;
  }

  function schedule(): void {
    timer = clock.setTimeout(
      () => {
        timer = undefined;
        refresh();
        if (!closed) schedule();
      },
      Math.min(config.refreshIntervalMs, MAX_REFRESH_TIMER_MS),
    );
  }

  refresh();
  schedule();
  return {
    instanceName,
    pluginName: "file_watcher",
    current: () => material,
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get lastError() {
      return lastError;
    },
    refresh,
    close() {
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      listeners.clear();
    },
  };
}

function start(
  name: string,
  config: CertificateProviderConfig,
  clock: Clock,
  logger: ScopedLogger,
): CertificateProvider & { close(): void } {
  return createFileWatcher(name, config.fileWatcher, clock, logger.child(`[certificate-provider ${name}]`));
}

/**
 * The certificate provider instances of `bootstrap`, for the TLS of xDS-enabled servers and clients. An instance
 * starts (reads its files, arms its refresh timer) the first time `get` asks for it; `close()` stops them all.
 */
export function createCertificateProviders(
  bootstrap: Bootstrap,
  options: CertificateProvidersOptions = {},
): CertificateProviders {
  const clock = options.clock ?? systemClock;
  const logger = scopeLogger(options.logger ?? noopLogger, "[xds-client]");
  const started = new Map<string, CertificateProvider & { close(): void }>();
  let closed = false;
  return {
    names: Object.freeze([...bootstrap.certificateProviders.keys()]),
    get(instanceName) {
      const existing = started.get(instanceName);
      if (existing !== undefined) return existing;
      const config = bootstrap.certificateProviders.get(instanceName);
      if (config === undefined) return undefined;
      const provider = start(instanceName, config, clock, logger);
      if (closed) provider.close();
      started.set(instanceName, provider);
      return provider;
    },
    close() {
      closed = true;
      for (const provider of started.values()) provider.close();
    },
  };
}
