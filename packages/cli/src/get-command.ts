// `xdskit get <type> [name] --etcd <endpoints>`: the resources an etcd prefix holds, as the proto JSON with `@type`
// that `serve` and `apply` read (one object for a name, else a list), so what `get` prints can be applied again.
import { readEtcdResources } from "@xdskit/etcd-source";
import { CliError, type CommandRun, ExitCode, UsageError } from "./command.js";
import { etcdTarget, openEtcd } from "./etcd-options.js";
import { messageToJson } from "./proto-json.js";
import { resolveResourceType } from "./resource-types.js";

export const run: CommandRun = async (positionals, values, io) => {
  if (positionals.length < 1 || positionals.length > 2) throw new UsageError("expected <type> [name]");
  const type = resolveResourceType(positionals[0]!);
  const name = positionals[1];
  const node = values.node as string | undefined;
  const target = await etcdTarget(values, io);
  const etcd = openEtcd(target);
  try {
    const read = await readEtcdResources({
      etcd,
      prefix: target.prefix,
      typeUrl: type.typeUrl,
      ...(name !== undefined ? { name } : {}),
      nodeId: node ?? null,
    }).catch((error: Error) => {
      throw new CliError(error.message);
    });
    let failed = false;
    const objects: unknown[] = [];
    // TP2 variants (keys with constraints) have no place in the folder format: `get` shows the resources proper.
    for (const stored of read.resources.filter((r) => r.resource.constraints === undefined)) {
      if (stored.message === undefined) {
        io.stderr(`${stored.key}: ${stored.error}\n`);
        failed = true;
        continue;
      }
      objects.push({ "@type": type.typeUrl, ...JSON.parse(messageToJson(stored.message)) });
    }
    if (name !== undefined && objects.length === 0 && !failed) {
      const typeName = type.typeUrl.slice(type.typeUrl.lastIndexOf(".") + 1);
      throw new CliError(`no ${typeName} named ${name} under ${target.prefix}/${node ? ` for node ${node}` : ""}`);
    }
    io.stdout(`${JSON.stringify(name !== undefined && objects.length === 1 ? objects[0] : objects, null, 2)}\n`);
    return failed ? ExitCode.failure : ExitCode.ok;
  } finally {
    etcd.close();
  }
};
