// A folder of resource files (the format `xdskit serve <dir>` reads) as resources to write to etcd, read and
// checked as serve reads and checks them: the same problems refuse it, the same warnings are told
// (docs/decisions.md#cli-serve-checks).
import type { EtcdResource } from "@xdskit/etcd-source";
import { CliError } from "./command.js";
import { checkResources, type ResourceWarning } from "./resource-checks.js";
import { type LoadedResource, loadResourceFiles } from "./resource-files.js";

export interface FolderResources {
  readonly loaded: readonly LoadedResource[];
  readonly resources: readonly EtcdResource[];
  /** What serve would warn about these resources: what a gRPC client would NACK, references to nothing. */
  readonly warnings: readonly ResourceWarning[];
}

/** Every resource of the folder; a CliError listing every problem, as serve reports them at startup. */
export async function folderResources(dir: string): Promise<FolderResources> {
  const loaded = await loadResourceFiles(dir);
  if (loaded.problems.length > 0) {
    throw new CliError(`cannot apply ${dir}:\n${loaded.problems.map((p) => `  ${p}\n`).join("")}`);
  }
  return {
    loaded: loaded.resources,
    resources: loaded.resources.map((r) => ({ resource: r.message, name: r.name })),
    warnings: checkResources(loaded.resources),
  };
}
