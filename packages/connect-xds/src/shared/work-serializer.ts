// Runs LB and resolver work one item at a time, in order: work queued while an item runs (a subchannel state change
// caused by a policy's own call, a picker published inside an update) runs after it, never inside it, as gRPC's
// work serializer does.
export interface WorkSerializer {
  run(work: () => void): void;
}

export function createWorkSerializer(onError: (error: unknown) => void): WorkSerializer {
  const queue: (() => void)[] = [];
  let running = false;
  return {
    run(work) {
      queue.push(work);
      if (running) return;
      running = true;
      try {
        for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
          try {
            item();
          } catch (error) {
            onError(error);
          }
        }
      } finally {
        running = false;
      }
    },
  };
}
