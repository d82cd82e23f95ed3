// `xdskit apply <folder> --etcd <endpoints>`: writes a folder of resource files (the format `serve` reads, validated
// as serve validates it) to an etcd prefix as one change: the keys it adds, changes and removes, in one etcd
// transaction when it fits etcd's limits, else in dependency-safe transactions (docs/decisions.md#etcd-writes). A
// change planned from a revision fails whole if anyone wrote the prefix after it (another apply won).
import { hostname } from "node:os";
import {
  applyEtcdChange,
  countTransactions,
  DEFAULT_TRANSACTION_LIMITS,
  type EtcdChangePlan,
  EtcdConflictError,
  EtcdError,
  EtcdValueTooLargeError,
  planEtcdChange,
} from "@xdskit/etcd-source";
import { CliError, type CommandRun, ExitCode, integerOption, UsageError } from "./command.js";
import { typeChanges } from "./etcd-changes.js";
import { etcdTarget, openEtcd } from "./etcd-options.js";
import { folderResources } from "./folder-resources.js";
import { formatWarning } from "./resource-checks.js";
import { describeChanges } from "./resource-diff.js";

function changesOf(plan: EtcdChangePlan): string {
  return describeChanges(
    typeChanges({
      added: plan.puts.filter((p) => p.kind === "added").map((p) => p.resource),
      changed: plan.puts.filter((p) => p.kind === "changed").map((p) => p.resource),
      removed: plan.deletes.flatMap((d) => (d.resource ? [d.resource] : [])),
    }),
  );
}

function etcdFailure(error: unknown): never {
  if (error instanceof EtcdConflictError || error instanceof EtcdValueTooLargeError || error instanceof EtcdError) {
    throw new CliError(error.message);
  }
  throw error;
}

export const run: CommandRun = async (positionals, values, io) => {
  if (positionals.length !== 1) throw new UsageError("expected one <folder>");
  const dir = positionals[0]!;
  const format = (values["value-format"] as string | undefined) ?? "binary";
  if (format !== "binary" && format !== "json")
    throw new UsageError(`--value-format must be binary or json, got "${format}"`);
  const limits = {
    maxTxnOps: integerOption(values, "max-txn-ops", DEFAULT_TRANSACTION_LIMITS.maxTxnOps),
    maxRequestBytes: integerOption(values, "max-request-bytes", DEFAULT_TRANSACTION_LIMITS.maxRequestBytes),
  };
  if (limits.maxTxnOps < 2) throw new UsageError("--max-txn-ops must be at least 2");
  const ifRevision = values["if-revision"] === undefined ? undefined : integerOption(values, "if-revision", 0);
  const target = await etcdTarget(values, io);
  const { resources, warnings } = await folderResources(dir);
  const lines = warnings.map(formatWarning);
  // Checked before etcd is reached, as serve checks a folder before it listens.
  if (values.strict === true && lines.length > 0) {
    throw new CliError(`cannot apply ${dir} (--strict), nothing written:\n${lines.map((l) => `  ${l}\n`).join("")}`);
  }
  for (const line of lines) io.stderr(`warning: ${line}\n`);
  const etcd = openEtcd(target);
  try {
    const plan = await planEtcdChange({
      etcd,
      prefix: target.prefix,
      resources,
      valueFormat: format,
      ...(ifRevision !== undefined ? { revision: ifRevision } : {}),
    }).catch(etcdFailure);
    const extra = plan.deletes.filter((d) => d.resource === undefined).map((d) => d.key);
    const transactions = (() => {
      try {
        return countTransactions(plan, limits);
      } catch (error) {
        return etcdFailure(error);
      }
    })();
    const what = `${changesOf(plan)}${extra.length > 0 ? `; removes ${extra.length} key(s) outside the layout: ${extra.join(", ")}` : ""}`;
    const split = transactions > 1 ? ` in ${transactions} transactions (more than one etcd transaction holds)` : "";
    if (values["dry-run"] === true) {
      io.stdout(`dry run, nothing written: ${what}${split} (${target.prefix} at revision ${plan.revision})\n`);
      return ExitCode.ok;
    }
    if (transactions === 0) {
      io.stdout(`nothing changed (${target.prefix} at revision ${plan.revision})\n`);
      return ExitCode.ok;
    }
    const result = await applyEtcdChange(etcd, plan, { limits, writer: `xdskit apply on ${hostname()}` }).catch(
      etcdFailure,
    );
    io.stdout(`applied: ${what}${split} (${target.prefix} at revision ${result.revision})\n`);
    return ExitCode.ok;
  } finally {
    etcd.close();
  }
};
