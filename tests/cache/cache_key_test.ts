// Cache keys against deep equality: the same key exactly for deep-equal values.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { argumentsKey, cacheKey, MAX_KEY_VALUES } from "../../src/cache/cache_key.ts";
import { propertyOptions } from "../property.ts";

// Deep equality as a cache key has it: `0` and `-0` alike (Node's strict equality tells them
// apart, `===` does not), and a plain object and one of no prototype.
function sameValues(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(positiveZeros(a), positiveZeros(b));
}

function positiveZeros(value: unknown, seen = new Map<object, unknown>()): unknown {
  if (Object.is(value, -0)) return 0;
  if (typeof value !== "object" || value === null) return value;
  if (seen.has(value)) return seen.get(value);
  if (value instanceof Date) return value;
  // A boxed primitive's value is in its internal slot, which a copy made below would not have (so
  // `new Number(0)` and `new Number(1)` would copy alike).
  if (value instanceof Number) return new Number(positiveZeros(value.valueOf()) as number);
  if (value instanceof String || value instanceof Boolean || value instanceof BigInt) return value;
  if (value instanceof Map) {
    return new Map([...value].map(([k, v]) => [positiveZeros(k, seen), positiveZeros(v, seen)]));
  }
  if (value instanceof Set) return new Set([...value].map((v) => positiveZeros(v, seen)));
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) if (i in value) copy[i] = positiveZeros(value[i], seen);
    return copy;
  }
  // A plain object and one with no prototype alike: both are a record of fields.
  const copy = Object.create(Object.getPrototypeOf(value) ?? Object.prototype);
  for (const k of Object.keys(value)) {
    setOwn(copy, k, positiveZeros((value as Record<string, unknown>)[k], seen));
  }
  return copy;
}

const values = fc.anything({
  maxDepth: 3,
  maxKeys: 4,
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withSparseArray: true,
  withBoxedValues: true,
  withNullPrototype: false,
});

// Values drawn from a small pool, so that equal ones come up often.
const pooled = fc.oneof(
  values,
  fc.constantFrom(0, -0, 1, "1", 1n, NaN, null, undefined, true, "", [], {}, [undefined], [, 1]),
  fc.record({ a: fc.constantFrom(0, -0, 1), b: fc.constantFrom("x", undefined) }, {
    requiredKeys: [],
  }),
  fc.array(fc.constantFrom(0, 1, "a"), { maxLength: 3 }).map((items) => new Set(items)),
  fc.array(fc.tuple(fc.constantFrom("a", 1), fc.constantFrom(0, 1)), { maxLength: 3 })
    .map((entries) => new Map(entries)),
);

/** The key of a value, or `undefined` for one that has none. */
function keyOrNone(value: unknown): string | undefined {
  try {
    return cacheKey(value);
  } catch (error) {
    assert.ok(error instanceof TypeError);
    return undefined;
  }
}

describe("cacheKey", () => {
  it("gives two values one key exactly when they are deep-equal", () => {
    fc.assert<[unknown, unknown]>(
      fc.property(pooled, pooled, (a, b) => {
        const [keyA, keyB] = [keyOrNone(a), keyOrNone(b)];
        // A value with no key (a boxed symbol) is refused, as the last test shows.
        fc.pre(keyA !== undefined && keyB !== undefined);
        assert.equal(keyA === keyB, sameValues(a, b));
      }),
      {
        ...propertyOptions(500),
        examples: [[ownProto(Object(0)), ownProto(Object(1))], [ownProto(""), {}]],
      },
    );
  });

  it("gives a value the key of its deep copy, whatever the order of its keys and entries", () => {
    fc.assert(
      fc.property(values, (value) => {
        const key = keyOrNone(value);
        fc.pre(key !== undefined);
        assert.equal(key, cacheKey(structuredCloneReversed(value)));
      }),
      // An own `__proto__` field, which fast-check draws now and then: a copy made by assignment
      // would set the prototype instead.
      {
        ...propertyOptions(300),
        examples: [[ownProto("")], [ownProto(0n)], [ownProto(Object(0))]],
      },
    );
  });

  it("tells apart what JSON does not", () => {
    const distinct = [
      0,
      "0",
      0n,
      null,
      undefined,
      NaN,
      Infinity,
      false,
      "false",
      [],
      [undefined],
      [,],
      {},
      { a: undefined },
      new Date(0),
      new Date(0).toISOString(),
      new Map(),
      new Set(),
      new Map([[1, 2]]),
      [[1, 2]],
      new Number(0),
      new String("0"),
      Object.assign(Object.create(null), { a: 1 }),
    ];
    const keys = distinct.map((value) => cacheKey(value));
    assert.equal(new Set(keys).size, keys.length, keys.join("\n"));
  });

  it("refuses what may hold its state where a key cannot see it, rather than share one key", () => {
    class User {
      #id: number;
      constructor(id: number) {
        this.#id = id;
      }
      get id(): number {
        return this.#id;
      }
    }
    class Stamp extends Date {}
    const withExtra = Object.assign([1, 2], { page: 3 });
    const symbolKeyed = { [Symbol("tenant")]: "a", id: 1 };
    const refused: [unknown, RegExp][] = [
      [new URL("https://alice.example/"), /^argument 1 is a URL, which may hold/],
      [/a+/, /^argument 1 is a RegExp/],
      [new Error("disk full"), /^argument 1 is a Error/],
      [new ArrayBuffer(4), /^argument 1 is a ArrayBuffer/],
      [new Uint8Array([1]), /^argument 1 is a Uint8Array/],
      [new URLSearchParams("a=1"), /^argument 1 is a URLSearchParams/],
      [new User(1), /^argument 1 is a User/],
      [new Stamp(0), /^argument 1 is a Stamp/],
      [{ at: new (class {})() }, /^argument 1 \(its at\) is an instance of a class/],
      [Object(Symbol("s")), /^argument 1 is a Symbol/],
      [withExtra, /^argument 1 is an array with properties beside its items/],
      [symbolKeyed, /^argument 1 has symbol-keyed properties/],
      [Promise.resolve(1), /^argument 1 is a promise: a key is made before the call/],
    ];
    for (const [value, message] of refused) {
      assert.throws(() => argumentsKey([value]), { name: "TypeError", message });
    }
    assert.throws(() => cacheKey(Promise.resolve(1)), { message: /^the key is a promise/ });
    // Boxed primitives hold their value where a key sees it.
    assert.notEqual(cacheKey(Object(1n)), cacheKey(Object(2n)));
  });

  it("refuses, at once, arguments whose parts are shared so often the key would be huge", () => {
    let shared: unknown[] = [1];
    for (let depth = 0; depth < 44; depth++) shared = [shared, shared];
    assert.throws(() => argumentsKey([shared]), {
      message: new RegExp(`makes the key more than ${MAX_KEY_VALUES} values long`),
    });
    let wide: unknown[] = [];
    for (let depth = 0; depth < 15; depth++) wide = [wide, wide];
    assert.equal(argumentsKey([wide]).length > 0, true); // 2^16 values: still a key
  });

  it("names the argument that has no key", () => {
    assert.throws(() => argumentsKey([1, () => 2]), { message: /^argument 2 is a function/ });
    assert.throws(() => argumentsKey([{ a: { b: Symbol("s") } }]), {
      message: /^argument 1 \(its a\.b\) is a symbol/,
    });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.throws(() => argumentsKey([cycle]), {
      message: /^argument 1 \(its self\) holds itself/,
    });
    assert.throws(() => cacheKey(() => 1), { message: /^the key is a function/ });
    assert.throws(() => cacheKey({ a: [Symbol("s")] }), {
      message: /^the key's a\[0\] is a symbol/,
    });
  });

  it("keys one argument as itself and several as a tuple no single value has", () => {
    fc.assert(
      fc.property(values, fc.array(values, { maxLength: 3 }), (one, several) => {
        fc.pre(keyOrNone(one) !== undefined && several.every((v) => keyOrNone(v) !== undefined));
        assert.equal(argumentsKey([one]), cacheKey(one));
        if (several.length !== 1) {
          assert.notEqual(argumentsKey(several), cacheKey(several));
          assert.ok(argumentsKey(several).startsWith("("));
        }
      }),
      propertyOptions(200),
    );
  });
});

/** An object whose own field is named `__proto__`, as `JSON.parse` makes one. */
function ownProto(value: unknown): object {
  return setOwn({}, "__proto__", value);
}

/**
 * Gives `object` an own field, as `JSON.parse` does. An assignment would set the prototype when the
 * name is `__proto__` on Node and Bun (Deno has no `Object.prototype.__proto__`).
 */
function setOwn(object: object, key: string, value: unknown): object {
  return Object.defineProperty(object, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** A deep copy with every object's keys, and every Map's and Set's entries, in reverse order. */
function structuredCloneReversed(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (value instanceof Date) return new Date(value.getTime());
  if (value instanceof Map) {
    return new Map(
      [...value].reverse().map((
        [k, v],
      ) => [structuredCloneReversed(k), structuredCloneReversed(v)]),
    );
  }
  if (value instanceof Set) return new Set([...value].reverse().map(structuredCloneReversed));
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      if (i in value) copy[i] = structuredCloneReversed(value[i]);
    }
    return copy;
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) {
    return Object(value.valueOf());
  }
  if (ArrayBuffer.isView(value)) return (value as unknown as { slice(): unknown }).slice();
  const copy = Object.create(Object.getPrototypeOf(value));
  for (const k of Object.keys(value).reverse()) {
    setOwn(copy, k, structuredCloneReversed((value as Record<string, unknown>)[k]));
  }
  return copy;
}

describe("cacheKey's messages", () => {
  it("keep every character of a property's name on one printable line", () => {
    for (let code = 0; code <= 0xffff; code++) {
      const name = `a${String.fromCharCode(code)}b`;
      assert.throws(() => argumentsKey([{ [name]: () => 1 }]), (e) => {
        const message = (e as Error).message;
        assert.doesNotMatch(
          message,
          // deno-lint-ignore no-control-regex
          /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udfff]/,
          `U+${code.toString(16)}`,
        );
        assert.ok(message.startsWith("argument 1 (its "), message);
        return true;
      });
    }
  });
});
