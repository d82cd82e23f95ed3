// One FIFO for every watcher callback of a client. State changes happen first, synchronously; the callbacks that
// describe them run later, in order, each isolated from the others. A callback may watch or unwatch: what that
// queues runs after what is already queued. A callback may return a promise: the group it was queued in (one ADS
// response) settles only once that promise has, which is how the ADS read loop applies flow control.

export interface CallbackGroup {
  /** Resolves once every callback queued in the group has run and every promise they returned has settled. */
  settled(): Promise<void>;
}

/** Who hears of a change (`pushChange`): a watcher, while its watch is active. */
export interface ChangeTarget {
  readonly active: boolean;
  readonly watcher: { onResourceChanged(result: never): unknown };
}

/** A callback: `run`, or (a change, the most frequent callback, queued with nothing made for it) `target`'s call. */
interface Task {
  readonly run: (() => unknown) | undefined;
  readonly target: ChangeTarget | undefined;
  readonly result: unknown;
  readonly group: Group | undefined;
}

class Group implements CallbackGroup {
  pending = 0;
  private waiters: (() => void)[] = [];
  private closed = false;
  add(): void {
    this.pending += 1;
  }
  done(): void {
    this.pending -= 1;
    this.flush();
  }
  close(): void {
    this.closed = true;
    this.flush();
  }
  private flush(): void {
    if (!this.closed || this.pending > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
  settled(): Promise<void> {
    if (this.closed && this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

export interface CallbackQueue {
  /** Queues `run`; errors it throws or rejects with go to `onError`. */
  push(run: () => unknown): void;
  /** Queues `target.watcher.onResourceChanged(result)`, made when its turn comes if `target` is still active. */
  pushChange(target: ChangeTarget, result: unknown): void;
  /** Runs `mutate` with every callback it queues counted in one group, closed when `mutate` returns. */
  grouped(mutate: () => void): CallbackGroup;
}

export function createCallbackQueue(onError: (error: unknown) => void): CallbackQueue {
  const tasks: Task[] = [];
  let head = 0;
  let scheduled = false;
  let current: Group | undefined;

  const drain = () => {
    scheduled = false;
    while (head < tasks.length) {
      const task = tasks[head]!;
      head += 1;
      let result: unknown;
      try {
        const target = task.target;
        if (target === undefined) result = task.run!();
        else if (target.active) result = target.watcher.onResourceChanged(task.result as never);
      } catch (error) {
        onError(error);
        task.group?.done();
        continue;
      }
      if (result instanceof Promise) {
        result.then(
          () => task.group?.done(),
          (error) => {
            onError(error);
            task.group?.done();
          },
        );
      } else {
        task.group?.done();
      }
    }
    tasks.length = 0;
    head = 0;
  };

  const queue = (task: Task) => {
    current?.add();
    tasks.push(task);
    if (!scheduled) {
      scheduled = true;
      queueMicrotask(drain);
    }
  };

  return {
    push(run) {
      queue({ run, target: undefined, result: undefined, group: current });
    },
    pushChange(target, result) {
      queue({ run: undefined, target, result, group: current });
    },
    grouped(mutate) {
      const group = new Group();
      const outer = current;
      current = group;
      try {
        mutate();
      } finally {
        current = outer;
        group.close();
      }
      return group;
    },
  };
}
