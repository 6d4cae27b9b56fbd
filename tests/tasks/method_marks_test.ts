// The marks the task decorators leave on methods, as their interceptors read them.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import "../../mod.ts";
import { markMethod, requiredMark } from "../../src/tasks/method_marks.ts";

const KEY = Symbol("test mark");

function Marked(value: number) {
  return (_method: unknown, context: ClassMethodDecoratorContext): void => {
    markMethod(context.metadata, KEY, String(context.name), value);
  };
}

class Quotes {
  @Marked(3)
  fetch(): void {}

  plain(): void {}
}

class Latest extends Quotes {
  @Marked(5)
  override fetch(): void {}
}

describe("requiredMark", () => {
  it("gives the most derived class's mark", () => {
    assert.equal(requiredMark<number>(new Quotes(), KEY, "fetch", "Marked"), 3);
    assert.equal(requiredMark<number>(new Latest(), KEY, "fetch", "Marked"), 5);
  });

  it("throws naming the method and the decorator where the method has no mark", () => {
    assert.throws(
      () => requiredMark<number>(new Quotes(), KEY, "plain", "Marked"),
      {
        message: "Quotes.plain(): the @Marked interceptor ran for a method with no @Marked mark",
      },
    );
  });
});
