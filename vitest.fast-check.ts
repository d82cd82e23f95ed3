// Every fast-check property in `npm test` runs from one fixed seed, so the gate is deterministic: a property that
// fails, fails on every machine, and a green run stays green. XDSKIT_FC_SEED=<n> picks another seed and
// XDSKIT_FC_SEED=random a fresh one per run, to explore (the fuzz scripts take their own XDSKIT_FUZZ_* settings).
import fc from "fast-check";

const setting = process.env.XDSKIT_FC_SEED ?? "20261123";
if (setting !== "random") {
  const seed = Number(setting);
  if (!Number.isSafeInteger(seed)) throw new Error(`XDSKIT_FC_SEED must be an integer or "random", got "${setting}"`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
}
