import { type FSWatcher, readFileSync, watch } from "node:fs";
import { isIP } from "node:net";
import { dirname } from "node:path";
import { createSecureContext, type SecureContextOptions } from "node:tls";
import type { ScopedLogger } from "../logger.js";
import { clearLongTimer, type LongTimer, setLongInterval } from "../long-timer.js";
import type { ServerTlsOptions } from "./tls-options.js";

type PemField = "cert" | "key" | "ca";

/** One of the three: where it comes from, and its latest bytes. */
interface PemSource {
  readonly field: PemField;
  readonly file: string | undefined;
  pem: Buffer;
}

/** The server's TLS material, reloaded from its files. */
export interface TlsCredentials {
  /** Clients are asked for a certificate. */
  readonly mutual: boolean;
  readonly requireClientCert: boolean;
  /** The material for the secure server or a new secure context. */
  contextOptions(): SecureContextOptions;
  /**
   * Reads the files again (PEM text never changes); when their bytes changed and make a valid context, calls
   * `apply`. Returns whether it applied anything. A file that cannot be read, or material that does not fit
   * together (a key of another certificate: a rotation half done), is logged and the previous material is kept.
   */
  reload(): boolean;
  /** Watches the files' directories (and re-reads every `refreshIntervalMs`), reloading after changes settle. */
  watch(apply: (options: SecureContextOptions) => void): void;
  /** Stops watching. */
  unwatch(): void;
}

/** Changes of one rotation (certificate, then key) arrive as several events: reload once they settle. */
const SETTLE_MS = 100;

function toBuffer(pem: string | Uint8Array): Buffer {
  return typeof pem === "string" ? Buffer.from(pem) : Buffer.from(pem.buffer, pem.byteOffset, pem.byteLength);
}

function readSource(field: PemField, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`tls.${field}File: cannot read ${file}: ${reason}`);
  }
}

function source(options: ServerTlsOptions, field: PemField): PemSource | undefined {
  const pem = options[field];
  const file = options[`${field}File`];
  if (pem !== undefined && file !== undefined) {
    throw new TypeError(`tls: give ${field} or ${field}File, not both`);
  }
  if (file !== undefined) return { field, file, pem: readSource(field, file) };
  if (pem !== undefined) return { field, file: undefined, pem: toBuffer(pem) };
  return undefined;
}

/** Reads the material (throwing a TypeError or an Error naming the option or file) and checks that it fits. */
export function createTlsCredentials(options: ServerTlsOptions, logger: ScopedLogger): TlsCredentials {
  const cert = source(options, "cert");
  const key = source(options, "key");
  const ca = source(options, "ca");
  if (!cert || !key)
    throw new TypeError("tls: a certificate (cert or certFile) and its key (key or keyFile) are needed");
  if (options.requireClientCert === true && !ca) {
    throw new TypeError("tls.requireClientCert needs the CA that signs client certificates (ca or caFile)");
  }
  const refreshIntervalMs = options.refreshIntervalMs ?? 60_000;
  if (!(refreshIntervalMs >= 0)) throw new RangeError("tls.refreshIntervalMs must be >= 0");
  const sources = [cert, key, ...(ca ? [ca] : [])];
  const build = (pems: readonly Buffer[]): SecureContextOptions => {
    const [certPem, keyPem, caPem] = pems;
    return { cert: certPem, key: keyPem, ...(caPem ? { ca: caPem } : {}) };
  };
  try {
    createSecureContext(build(sources.map((s) => s.pem)));
  } catch (error) {
    throw new Error(`tls: the certificate, key and CA do not make a TLS context: ${describe(error)}`);
  }

  const watchers: FSWatcher[] = [];
  let refresh: LongTimer | undefined;
  let settle: NodeJS.Timeout | undefined;
  let onApply: ((options: SecureContextOptions) => void) | undefined;

  function reload(): boolean {
    const files = sources.filter((s) => s.file !== undefined);
    let pems: Buffer[];
    try {
      pems = sources.map((s) => (s.file === undefined ? s.pem : readSource(s.field, s.file)));
    } catch (error) {
      logger.error(`TLS reload failed, keeping the previous certificate: ${describe(error)}`);
      return false;
    }
    if (pems.every((pem, i) => pem.equals(sources[i]?.pem ?? Buffer.alloc(0)))) return false;
    const next = build(pems);
    try {
      createSecureContext(next);
    } catch (error) {
      logger.error(
        `TLS reload failed, keeping the previous certificate: ${files.map((s) => s.file).join(", ")} do not make a TLS context: ${describe(error)}`,
      );
      return false;
    }
    pems.forEach((pem, i) => {
      const s = sources[i];
      if (s) s.pem = pem;
    });
    onApply?.(next);
    logger.info(`TLS certificate reloaded from ${files.map((s) => s.file).join(", ")}`);
    return true;
  }

  function scheduleReload(): void {
    if (settle) clearTimeout(settle);
    settle = setTimeout(() => {
      settle = undefined;
      reload();
    }, SETTLE_MS);
    settle.unref();
  }

  return {
    mutual: ca !== undefined,
    requireClientCert: ca !== undefined && options.requireClientCert !== false,
    contextOptions: () => build(sources.map((s) => s.pem)),
    reload,
    watch(apply) {
      onApply = apply;
      // Directories, not files: a rotation often replaces a file (a rename, or Kubernetes swapping a symlink), which
      // a watch on the old file would not see.
      const dirs = new Set(sources.flatMap((s) => (s.file === undefined ? [] : [dirname(s.file)])));
      for (const dir of dirs) {
        try {
          const watcher = watch(dir, { persistent: false }, scheduleReload);
          watcher.on("error", (error) => logger.warn(`stopped watching ${dir} for certificate changes`, error));
          watchers.push(watcher);
        } catch (error) {
          logger.warn(
            `cannot watch ${dir} for certificate changes (read every ${refreshIntervalMs} ms instead)`,
            error,
          );
        }
      }
      if (dirs.size > 0 && refreshIntervalMs > 0) {
        // From the options: any length (docs/decisions.md#long-timers).
        refresh = setLongInterval(reload, refreshIntervalMs);
        refresh.unref();
      }
    },
    unwatch() {
      for (const watcher of watchers.splice(0)) watcher.close();
      clearLongTimer(refresh);
      if (settle) clearTimeout(settle);
      refresh = undefined;
      settle = undefined;
      onApply = undefined;
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `localhost`, 127.0.0.0/8 or ::1 (also IPv4-mapped): where cleartext stays on the machine. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  if (name === "localhost") return true;
  if (isIP(name) === 4) return name.startsWith("127.");
  if (isIP(name) !== 6) return false;
  return name === "::1" || /^(0{1,4}:){7}0{0,3}1$/.test(name) || /^::ffff:127\./.test(name);
}
