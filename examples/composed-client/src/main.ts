// `npm start`: runs the composed program once and prints what each step found.
import { runComposedClient } from "./composed-client.js";

try {
  await runComposedClient();
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
}
