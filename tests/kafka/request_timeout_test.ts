// A request that timed out, found however deep the client's tries bury it (in an aggregate's
// errors, in a cause), and never a throw nor an endless walk on a hostile error.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { TimeoutError } from "@platformatic/kafka";
import { holdsTimeout } from "../../src/kafka/request_timeout.ts";
import { propertyOptions } from "../property.ts";

// A tree of errors as the client's tries nest them, with or without a timeout among them.
interface Tree {
  readonly timeout: boolean;
  readonly errors: readonly Tree[];
  readonly cause: Tree | undefined;
}

const treeOf = (depth: number): fc.Arbitrary<Tree> =>
  fc.record({
    timeout: fc.boolean(),
    errors: depth === 0 ? fc.constant([]) : fc.array(treeOf(depth - 1), { maxLength: 3 }),
    cause: depth === 0 ? fc.constant(undefined) : fc.option(treeOf(depth - 1), { nil: undefined }),
  });
const tree = treeOf(3);

function errorOf(node: Tree): unknown {
  const inner = node.errors.map(errorOf);
  const error = node.timeout
    ? new TimeoutError("request timed out")
    : new AggregateError(inner, "failed");
  if (node.timeout && inner.length > 0) Object.assign(error, { errors: inner });
  if (node.cause !== undefined) Object.assign(error, { cause: errorOf(node.cause) });
  return error;
}

const anyTimeout = (node: Tree): boolean =>
  node.timeout || node.errors.some(anyTimeout) ||
  (node.cause !== undefined && anyTimeout(node.cause));

describe("holdsTimeout", () => {
  it("finds a timeout anywhere in the errors and causes, and none where there is none", () => {
    fc.assert(
      fc.property(tree, (node) => {
        assert.equal(holdsTimeout(errorOf(node)), anyTimeout(node));
      }),
      propertyOptions(),
    );
  });

  it("answers false for what is not an error, a cycle, and a getter that throws", () => {
    assert.equal(holdsTimeout(undefined), false);
    assert.equal(holdsTimeout("timeout"), false);
    const cycle: { cause?: unknown; errors: unknown[] } = { errors: [] };
    cycle.cause = cycle;
    cycle.errors.push(cycle);
    assert.equal(holdsTimeout(cycle), false);
    const hostile = Object.defineProperty({}, "errors", {
      get() {
        throw new Error("no");
      },
    });
    assert.equal(holdsTimeout(new Error("x", { cause: hostile })), false);
  });
});
