// A folder of resource files (the format `xdskit serve <dir>` reads) as resources to write to etcd, read and
// validated as serve reads them.
import type { EtcdResource } from "@xdskit/etcd-source";
import { CliError } from "./command.js";
import { type LoadedResource, loadResourceFiles } from "./resource-files.js";

export interface FolderResources {
  readonly loaded: readonly LoadedResource[];
  readonly resources: readonly EtcdResource[];
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
  };
}
