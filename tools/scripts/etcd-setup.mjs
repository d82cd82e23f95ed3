// The etcd that the etcd tests run (@xdskit/etcd-source, @xdskit/cli): found on PATH, or installed with apt when
// this is root on Debian or Ubuntu. Without it those tests skip themselves and `npm test` says so in its last line.
import { spawnSync } from "node:child_process";
import { ETCD_INSTALL_COMMAND } from "./test-report.mjs";

function hasEtcd() {
  return spawnSync("etcd", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * Makes sure `etcd` is on PATH where it can: `apt-get install -y etcd-server` as root, after `apt-get update` if the
 * first attempt fails (stale package lists). Returns whether etcd is there.
 */
export function ensureEtcd({ log, run }) {
  if (hasEtcd()) return { available: true };
  const root = process.getuid?.() === 0;
  const apt = spawnSync("apt-get", ["--version"], { stdio: "ignore" }).status === 0;
  if (!root || !apt) {
    log(
      `etcd: not installed and cannot install it here (needs root and apt); its tests will be skipped (${ETCD_INSTALL_COMMAND})`,
    );
    return { available: false };
  }
  log(`etcd: not installed; ${ETCD_INSTALL_COMMAND}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = () =>
    run("apt-get", ["install", "-y", "--no-install-recommends", "etcd-server"], { env }).status === 0;
  if (!install()) {
    run("apt-get", ["update"], { env });
    install();
  }
  const available = hasEtcd();
  if (!available) log("etcd: the installation failed; its tests will be skipped");
  return { available };
}
