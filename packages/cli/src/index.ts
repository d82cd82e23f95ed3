// @xdskit/cli: the `xdskit` command, also callable from code.
export { runCli } from "./cli.js";
export { CliError, ExitCode, UsageError } from "./command.js";
export type { CliIo } from "./command.js";
