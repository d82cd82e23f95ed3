// How the client loads the modules it needs only once in use (docs/architecture.md#what-loads-when): in Node, by
// `require` of the ES module (Node 20.19+ and 22.12+, the engines field's range), which is synchronous, so a module
// is never half-loaded and a later synchronous need (CSDS, a built-in type's `decode` called directly) can always
// load it too. Where `require` cannot load it (a bundle, the sources run by a TypeScript-aware test runner), by
// `import()`.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** The module at `path` (relative to this directory), now. Throws when `require` cannot load it. */
export function requireModule<M>(path: string): M {
  return require(path) as M;
}

/**
 * `load`, run at most once at a time: every call gets the same promise while it runs and once it has succeeded; a
 * failure is forgotten, so the next call runs `load` again (a module that failed to load is tried again on the retry).
 * `pending()` is that promise, if `load` has been started, without starting it.
 */
export function loadOnce<T>(load: () => Promise<T>): { (): Promise<T>; pending(): Promise<T> | undefined } {
  let promise: Promise<T> | undefined;
  const get = (): Promise<T> => {
    promise ??= load().catch((error: unknown) => {
      promise = undefined;
      throw error;
    });
    return promise;
  };
  return Object.assign(get, { pending: () => promise });
}

/** The module at `path`: required at once where possible, else imported by `importer` (`import()` of `path`). */
export function loadModule<M>(path: string, importer: () => Promise<M>): Promise<M> {
  let module: M;
  try {
    module = requireModule<M>(path);
  } catch {
    return importer();
  }
  return Promise.resolve(module);
}
