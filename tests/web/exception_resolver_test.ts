import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { exceptionScope, handlerFor } from "../../src/web/exception_resolver.ts";
import { ExceptionHandler } from "../../src/web/exception_handler.ts";
import type { Class } from "../../src/context/class.ts";
import { propertyOptions } from "../property.ts";

// A random forest of error classes: class i extends class parent[i] (< i) or Error.
const hierarchy = fc.integer({ min: 1, max: 12 }).chain((n) =>
  fc.tuple(
    fc.array(fc.integer({ min: -1, max: n - 1 }), { minLength: n, maxLength: n })
      .map((parents) => parents.map((p, i) => (p < i ? p : -1))),
    fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { maxLength: n }),
    fc.integer({ min: 0, max: n - 1 }),
  )
);

function classes(parents: number[]): Class[] {
  const made: Class[] = [];
  parents.forEach((p, i) => {
    const base = (p < 0 ? Error : made[p]) as new (message?: string) => Error;
    made.push({ [`E${i}`]: class extends base {} }[`E${i}`]);
  });
  return made;
}

// The model: walk parents from the thrown class up; the first class with a handler takes it.
function nearest(
  parents: number[],
  handled: ReadonlySet<number>,
  thrown: number,
): number | undefined {
  for (let c = thrown; c >= 0; c = parents[c]) if (handled.has(c)) return c;
  return undefined;
}

describe("exception handler lookup (property)", () => {
  it("takes the handler of the nearest class in the error's prototype chain, as the model does", () => {
    fc.assert(
      fc.property(hierarchy, ([parents, handled, thrown]) => {
        const types = classes(parents);
        const beanClass = class {};
        const instance: Record<string, () => number> = {};
        // One handler method per handled class, decorated as the decorator would be.
        for (const i of handled) {
          const method = () => i;
          instance[`h${i}`] = method;
          ExceptionHandler(types[i])(method, {
            kind: "method",
            name: `h${i}`,
            static: false,
            private: false,
            metadata: (beanClass as unknown as Record<symbol, object>)[Symbol.metadata] ??= {},
            access: { has: () => true, get: (o: unknown) => (o as typeof instance)[`h${i}`] },
            addInitializer: () => {},
          } as unknown as ClassMethodDecoratorContext);
        }
        const scope = exceptionScope([{ type: beanClass, instance }]);
        const error = new (types[thrown] as new () => Error)();
        const expected = nearest(parents, new Set(handled), thrown);
        const found = handlerFor(scope, error);
        assert.equal(
          found === undefined ? undefined : found.call(error, undefined as never),
          expected,
        );
      }),
      propertyOptions(200),
    );
  });

  it("no handler claims a primitive, null, or an object without a prototype", () => {
    const beanClass = class {};
    const handler = () => "taken";
    ExceptionHandler(Object)(handler, {
      kind: "method",
      name: "h",
      static: false,
      private: false,
      metadata: (beanClass as unknown as Record<symbol, object>)[Symbol.metadata] ??= {},
      access: { has: () => true, get: () => handler },
      addInitializer: () => {},
    } as unknown as ClassMethodDecoratorContext);
    // A public method is looked up on the bean, as a call finds it.
    const scope = exceptionScope([{ type: beanClass, instance: { h: handler } }]);
    const values: [string, unknown][] = [
      ["a string", "text"],
      ["a number", 1],
      ["null", null],
      ["undefined", undefined],
      ["a null-prototype object", Object.create(null)],
    ];
    for (const [name, value] of values) assert.equal(handlerFor(scope, value), undefined, name);
    assert.equal(handlerFor(scope, {})?.label, "beanClass.h");
    const hostile = new Proxy({}, {
      getPrototypeOf() {
        throw new Error("trap");
      },
    });
    assert.equal(handlerFor(scope, hostile), undefined);
  });
});
