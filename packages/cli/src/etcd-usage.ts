// The etcd options of `serve --etcd`, `apply` and `get`, named as etcd's own client (etcdctl) names them:
// `--etcd` (etcdctl's `--endpoints`), `--prefix`, `--cacert`, `--cert`, `--key`, `--user name[:password]`,
// `--password`. Apart from etcd-options.ts so that help texts load nothing of etcd-source.
import type { CommandSpec } from "./command.js";

export const ETCD_OPTIONS: CommandSpec["options"] = {
  etcd: { type: "string" },
  prefix: { type: "string" },
  cacert: { type: "string" },
  cert: { type: "string" },
  key: { type: "string" },
  user: { type: "string" },
  password: { type: "string" },
};

export const ETCD_USAGE = `  --etcd <endpoints>  etcd's client URLs, comma-separated: host:port, http://host:port or https://host:port
  --prefix <prefix>   the key prefix holding the resources, default /xds
  --cacert <file>     TLS to etcd: the CA that signed etcd's certificate (PEM); host:port endpoints are then https
  --cert <file>       TLS client certificate (PEM), for etcd's --client-cert-auth, with --key
  --key <file>        the client certificate's private key (PEM)
  --user <name[:password]>  etcd authentication (the password also from --password or ETCDCTL_PASSWORD)
  --password <password>`;
