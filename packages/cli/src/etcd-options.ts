// The etcd connection `serve --etcd`, `apply` and `get` make from their options (etcd-usage.ts lists them).
import { access } from "node:fs/promises";
import { connectEtcd, type EtcdConnection, type EtcdConnectionOptions } from "@xdskit/etcd-source";
import { CliError, type CliIo, UsageError } from "./command.js";

export interface EtcdTarget {
  readonly options: EtcdConnectionOptions;
  readonly endpoints: string;
  readonly prefix: string;
}

/** The etcd connection the options describe; a UsageError or CliError naming what is wrong. */
export async function etcdTarget(values: Record<string, unknown>, io: CliIo): Promise<EtcdTarget> {
  const endpoints = values.etcd as string | undefined;
  if (endpoints === undefined || endpoints.trim() === "") throw new UsageError("--etcd <endpoints> is required");
  const files = { cacert: values.cacert, cert: values.cert, key: values.key } as Record<string, string | undefined>;
  if ((files.cert === undefined) !== (files.key === undefined)) throw new UsageError("--cert and --key go together");
  for (const [option, file] of Object.entries(files)) {
    if (file !== undefined) {
      await access(file).catch((error: Error) => {
        throw new CliError(`--${option} ${file}: ${error.message}`);
      });
    }
  }
  let auth: EtcdConnectionOptions["auth"];
  const user = values.user as string | undefined;
  if (user !== undefined) {
    const colon = user.indexOf(":");
    const name = colon < 0 ? user : user.slice(0, colon);
    const password =
      colon >= 0 ? user.slice(colon + 1) : ((values.password as string | undefined) ?? io.env.ETCDCTL_PASSWORD);
    if (name === "") throw new UsageError("--user needs a user name");
    if (password === undefined) {
      throw new UsageError("--user needs a password: --user name:password, --password or ETCDCTL_PASSWORD");
    }
    auth = { user: name, password };
  } else if (values.password !== undefined) {
    throw new UsageError("--password goes with --user");
  }
  const tls =
    files.cacert !== undefined || files.cert !== undefined
      ? {
          ...(files.cacert !== undefined ? { caFile: files.cacert } : {}),
          ...(files.cert !== undefined ? { certFile: files.cert, keyFile: files.key! } : {}),
        }
      : undefined;
  const options: EtcdConnectionOptions = {
    endpoints: [endpoints],
    ...(tls ? { tls } : {}),
    ...(auth ? { auth } : {}),
  };
  const prefix = ((values.prefix as string | undefined) ?? "/xds").replace(/\/+$/, "") || "/";
  return { options, endpoints, prefix };
}

/** Connects; a bad endpoint is a UsageError. */
export function openEtcd(target: EtcdTarget): EtcdConnection {
  try {
    return connectEtcd(target.options);
  } catch (error) {
    throw new UsageError(`--etcd: ${(error as Error).message}`);
  }
}
