// The types of @thaw/thaw/tasks' decorators: checked by `tsc` (tests/types/tsconfig.json) and by
// `deno check`. Each wrong use carries `@ts-expect-error`, so the check fails if the compiler
// stops refusing it; the test at the end runs the correct bean.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, Service } from "../../mod.ts";
import { Async, ConcurrencyLimit, Daemon, Lockable, Retryable, tasks } from "../../tasks.ts";

@Service()
class Orders {
  @Async()
  async label(id: number): Promise<string> {
    return await Promise.resolve(`order-${id}`);
  }

  // The key takes the method's first arguments, as they are typed.
  @Lockable({ key: (id: number) => `order-${id}` })
  async ship(id: number, _note: string): Promise<number> {
    return await Promise.resolve(id);
  }
}

// Compile-time fixtures only: the decorators refuse them at run time too, so never run.
export function wrongUses(): unknown[] {
  class Wrong {
    // @ts-expect-error the key takes a number, the method a string
    @Lockable({ key: (id: number) => `order-${id}` })
    async ship(id: string): Promise<string> {
      return await Promise.resolve(id);
    }

    // @ts-expect-error @Retryable awaits each attempt: the method returns a promise
    @Retryable()
    sync(): number {
      return 1;
    }

    // @ts-expect-error @ConcurrencyLimit counts a run until its promise settles
    @ConcurrencyLimit(1)
    count(): number {
      return 1;
    }

    // @ts-expect-error @Async answers with a promise: the caller would get one, not a string
    @Async()
    name(): string {
      return "ada";
    }
  }

  // @ts-expect-error a daemon runs run(signal), which this class lacks
  @Daemon()
  class NoRun {}
  return [Wrong, NoRun];
}

describe("@thaw/thaw/tasks' types", () => {
  it("the correct bean runs", async () => {
    const app = await bootstrap({ components: [Orders], tasks: tasks() });
    assert.equal(await app.getBean(Orders).ship(7, "fragile"), 7);
    assert.equal(await app.getBean(Orders).label(7), "order-7");
    await app.close();
  });
});
