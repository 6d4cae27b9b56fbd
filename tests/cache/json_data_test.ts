// notJsonData against JSON itself: a value passes exactly when JSON.stringify then JSON.parse give
// it back deep-equal (strictly: prototypes, -0 and holes count), but for the two changes the rule
// allows (an object's properties that are `undefined` dropped, -0 read as 0).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { notJsonData } from "../../src/cache/json_data.ts";
import { propertyOptions } from "../property.ts";

/** What JSON gives back of JSON data: the changes the rule allows, and no other. */
function allowedChanges(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype) {
    // Holes stay holes: Array.from would turn them into `undefined`.
    const copy = new Array(value.length);
    for (let i = 0; i < value.length; i++) if (i in value) copy[i] = allowedChanges(value[i]);
    return copy;
  }
  if (
    value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype
  ) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) {
        Object.defineProperty(copy, key, {
          value: allowedChanges(item),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    for (const symbol of Object.getOwnPropertySymbols(value)) {
      (copy as Record<symbol, unknown>)[symbol] = (value as Record<symbol, unknown>)[symbol];
    }
    return copy;
  }
  return value;
}

function survivesJson(value: unknown): boolean {
  try {
    const text = JSON.stringify(value);
    if (text === undefined) return false;
    assert.deepStrictEqual(JSON.parse(text), allowedChanges(value));
    return true;
  } catch {
    return false;
  }
}

class User {
  constructor(readonly id: number) {}
}

describe("notJsonData", () => {
  it("passes JSON data, named what JSON keeps", () => {
    for (
      const value of [
        null,
        true,
        "",
        "\u{1F600}\uD800",
        0,
        -0,
        1.5e300,
        [],
        [1, "a", null, [{}]],
        { a: { b: [true] }, gone: undefined },
        JSON.parse('{"__proto__": 1}'),
      ]
    ) {
      assert.equal(notJsonData(value), undefined, `${JSON.stringify(value)}`);
    }
  });

  it("names what JSON would change or drop, and where it is", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const cases: [unknown, string][] = [
      [new Date(0), "a Date"],
      [new Map(), "a Map"],
      [new Set([1]), "a Set"],
      [new User(1), "a User"],
      [new Error("x"), "an Error"],
      [new (class {})(), "an instance of an anonymous class"],
      [Object.create(null), "an object of null prototype"],
      [new Uint8Array(2), "a Uint8Array"],
      [new String("x"), "a String"],
      [12n, "a bigint"],
      [NaN, "NaN"],
      [-Infinity, "-Infinity"],
      [() => 1, "a function"],
      [Symbol("s"), "a symbol"],
      [undefined, "undefined"],
      [[1, undefined], "undefined at [1]"],
      // deno-lint-ignore no-sparse-arrays
      [[1, , 3], "an array hole at [1]"],
      [{ [Symbol("s")]: 1 }, "a symbol-keyed property"],
      [{ user: { "born at": new Date(0) } }, 'a Date at .user["born at"]'],
      [{ list: [{ n: 1n }] }, "a bigint at .list[0].n"],
      [{ f() {} }, "a function at .f"],
      [cycle, "a value that holds itself at .self"],
    ];
    for (const [value, problem] of cases) assert.equal(notJsonData(value), problem);
  });

  it("a value shared twice, not held by itself, is data", () => {
    const shared = { id: 1 };
    assert.equal(notJsonData({ a: shared, b: [shared, shared] }), undefined);
  });

  it("passes a value exactly when JSON gives it back (property)", () => {
    const values = fc.oneof(
      fc.jsonValue(),
      fc.anything({
        withBigInt: true,
        withBoxedValues: true,
        withDate: true,
        withMap: true,
        withNullPrototype: true,
        withSet: true,
        withSparseArray: true,
        withTypedArray: true,
        withObjectString: true,
        withUnicodeString: true,
      }),
    );
    fc.assert(
      fc.property(values, (value) => {
        assert.equal(notJsonData(value) === undefined, survivesJson(value), notJsonData(value));
      }),
      propertyOptions(500),
    );
  });

  it("refuses an array with properties beside its items, which JSON would drop or obey", () => {
    const custom = Object.assign([1, 2], { toJSON: () => "not an array" });
    assert.equal(notJsonData(custom), "an array with properties beside its items");
    assert.equal(
      notJsonData({ list: Object.assign([1], { page: 2 }) }),
      "an array with properties beside its items at .list",
    );
  });
});
