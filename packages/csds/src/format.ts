// CSDS for people: a client's config dump as an aligned text table, e.g. for logs or an admin page.
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import type { ClientConfig } from "@xdskit/protos/envoy/service/status/v3/csds_pb";

/** One row per resource: type, name, status, version, last error (version: details). */
export function formatClientConfig(config: ClientConfig): string {
  const rows = config.genericXdsConfigs.map((c) => [
    c.typeUrl.slice(c.typeUrl.lastIndexOf(".") + 1),
    c.name,
    ClientResourceStatus[c.clientStatus] ?? String(c.clientStatus),
    c.versionInfo || "-",
    c.errorState ? `${c.errorState.versionInfo || "-"}: ${c.errorState.details}` : "",
  ]);
  const header = ["type", "name", "status", "version", "last error"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const title = `client ${config.clientScope || "(no scope)"}, node ${config.node?.id ?? "(none)"}`;
  return [title, line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
