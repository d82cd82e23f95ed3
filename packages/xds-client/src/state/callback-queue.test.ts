// The callback queue on its own: FIFO order, isolation of a failing callback, callbacks queued by callbacks, and the
// groups the ADS read loop waits on (flow control).
import { describe, expect, it } from "vitest";
import { createCallbackQueue } from "./callback-queue.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the callback queue", () => {
  it("runs callbacks later, in the order they were queued", async () => {
    const queue = createCallbackQueue(() => {});
    const ran: number[] = [];
    for (let i = 0; i < 5; i++) queue.push(() => ran.push(i));
    expect(ran).toEqual([]);
    await tick();
    expect(ran).toEqual([0, 1, 2, 3, 4]);
  });

  it("runs what a callback queues after what was already queued", async () => {
    const queue = createCallbackQueue(() => {});
    const ran: string[] = [];
    queue.push(() => {
      ran.push("a");
      queue.push(() => ran.push("c"));
    });
    queue.push(() => ran.push("b"));
    await tick();
    expect(ran).toEqual(["a", "b", "c"]);
  });

  it("isolates a callback that throws or rejects: the error goes to onError, the others run", async () => {
    const errors: unknown[] = [];
    const queue = createCallbackQueue((error) => errors.push(error));
    const ran: string[] = [];
    const thrown = new Error("thrown");
    const rejected = new Error("rejected");
    queue.push(() => {
      throw thrown;
    });
    queue.push(() => Promise.reject(rejected));
    queue.push(() => ran.push("after"));
    await tick();
    expect(ran).toEqual(["after"]);
    expect(errors).toEqual([thrown, rejected]);
  });

  it("settles a group once every callback it queued has run and every promise they returned has settled", async () => {
    const queue = createCallbackQueue(() => {});
    let release: () => void = () => {};
    const group = queue.grouped(() => {
      queue.push(() => undefined);
      queue.push(
        () =>
          new Promise<void>((resolve) => {
            release = resolve;
          }),
      );
    });
    let settled = false;
    void group.settled().then(() => {
      settled = true;
    });
    await tick();
    expect(settled).toBe(false);
    release();
    await tick();
    expect(settled).toBe(true);
  });

  it("settles a group whose callback threw or rejected, so one bad watcher cannot stall the reads", async () => {
    const queue = createCallbackQueue(() => {});
    const group = queue.grouped(() => {
      queue.push(() => {
        throw new Error("boom");
      });
      queue.push(() => Promise.reject(new Error("later")));
    });
    await tick();
    await expect(group.settled()).resolves.toBeUndefined();
  });

  it("settles an empty group at once and does not count callbacks queued outside it", async () => {
    const queue = createCallbackQueue(() => {});
    const empty = queue.grouped(() => {});
    await expect(empty.settled()).resolves.toBeUndefined();
    let release: () => void = () => {};
    queue.push(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    const other = queue.grouped(() => queue.push(() => undefined));
    await tick();
    await expect(other.settled()).resolves.toBeUndefined();
    release();
  });

  it("counts into a group the callbacks its callbacks queue only if queued inside the group's mutation", async () => {
    const queue = createCallbackQueue(() => {});
    const ran: string[] = [];
    let release: () => void = () => {};
    const group = queue.grouped(() => {
      queue.push(() => {
        ran.push("first");
        // Queued while the callback runs, not while the group mutates: not part of the group.
        queue.push(
          () =>
            new Promise<void>((resolve) => {
              ran.push("second");
              release = resolve;
            }),
        );
      });
    });
    await tick();
    expect(ran).toEqual(["first", "second"]);
    await expect(group.settled()).resolves.toBeUndefined();
    release();
  });

  it("runs a queued change in its turn among the other callbacks, only if its target is still active then", async () => {
    const errors: unknown[] = [];
    const queue = createCallbackQueue((error) => errors.push(error));
    const ran: unknown[] = [];
    const watcher = { onResourceChanged: (result: unknown) => ran.push(result) };
    const kept = { active: true, watcher };
    const dropped = { active: true, watcher };
    const failing = new Error("watcher failed");
    const throwing = {
      active: true,
      watcher: {
        onResourceChanged: () => {
          throw failing;
        },
      },
    };
    let release: () => void = () => {};
    const slow = {
      active: true,
      watcher: { onResourceChanged: () => new Promise<void>((resolve) => (release = resolve)) },
    };
    const group = queue.grouped(() => {
      queue.push(() => ran.push("before"));
      queue.pushChange(kept, "to kept");
      queue.pushChange(dropped, "to dropped");
      queue.pushChange(throwing, "to throwing");
      queue.pushChange(slow, "to slow");
      queue.push(() => ran.push("after"));
    });
    // Deactivated after queueing, before its turn: nothing is delivered to it.
    dropped.active = false;
    let settled = false;
    void group.settled().then(() => {
      settled = true;
    });
    await tick();
    expect(ran).toEqual(["before", "to kept", "after"]);
    expect(errors).toEqual([failing]);
    // The group waits for the promise the slow watcher returned.
    expect(settled).toBe(false);
    release();
    await tick();
    expect(settled).toBe(true);
  });
});
