// Watches a folder and its subfolders for changes to resource files, in a way that survives atomic saves.
//
// Editors and tools save by writing a temporary file and renaming it over the old one (`mv`, `sed -i`, vim, VS
// Code...). A watch on a file (which Node's `recursive: true` sets up per file on Linux) follows the old inode
// and misses every later change. A watch on a directory does not: it reports whatever happens to the entries in it,
// whichever inode they hold. So this watches every directory of the tree, non-recursively, and watches the
// directories again when an entry that may be a folder comes or goes (docs/decisions.md#cli-serve-watching).
import { type FSWatcher, watch } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";

export interface TreeWatcher {
  close(): void;
}

export interface TreeWatcherOptions {
  /** Which file names matter: a change of any other entry only matters when it is a folder coming or going. */
  readonly relevant: (fileName: string) => boolean;
  /** Called for each change of a relevant file and each folder added or removed; the caller debounces. */
  readonly onChange: () => void;
  readonly onError: (error: Error) => void;
}

async function directories(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return [root, ...entries.filter((e) => e.isDirectory()).map((e) => join(e.parentPath, e.name))];
}

export async function watchTree(root: string, options: TreeWatcherOptions): Promise<TreeWatcher> {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  const add = (dir: string) => {
    try {
      const watcher = watch(dir, (event, fileName) => {
        if (fileName === null || options.relevant(fileName)) options.onChange();
        else if (event === "rename") {
          // Another entry came or went: a folder (with files in it, maybe), or a temporary file of an editor.
          rescan().then((changed) => changed && options.onChange(), options.onError);
        }
      });
      watcher.on("error", (error) => {
        // A watched folder that was removed ends its watch; the next rescan settles the set.
        watchers.delete(dir);
        watcher.close();
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") options.onError(error);
      });
      watchers.set(dir, watcher);
    } catch (error) {
      // Gone between the listing and the watch: the next rescan settles it.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") options.onError(error as Error);
    }
  };
  /** Watches the directories of the tree as it is now; resolves whether that set changed. */
  const rescan = async (): Promise<boolean> => {
    const now = new Set(await directories(root).catch(() => [root]));
    if (closed) return false;
    let changed = false;
    for (const [dir, watcher] of watchers) {
      if (!now.has(dir)) {
        watcher.close();
        watchers.delete(dir);
        changed = true;
      }
    }
    for (const dir of now) {
      if (!watchers.has(dir)) {
        add(dir);
        changed = true;
      }
    }
    return changed;
  };
  await rescan();
  return {
    close() {
      closed = true;
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
