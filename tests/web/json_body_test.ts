import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpException } from "../../mod.ts";
import { parseJson } from "../../src/http/parse_json.ts";
import { classBinding } from "../../src/web/json_body.ts";
import { propertyOptions } from "../property.ts";

class Target {
  name = "";
  count = 0;
  callback = (): string => "kept";
  #secret = "s";
  set secret(value: string) {
    if (typeof value !== "string") throw new TypeError("secret");
    this.#secret = value;
  }
  get readOnly(): string {
    return this.#secret;
  }
  method(): string {
    return "kept";
  }
}

const KEYS = [
  "name",
  "count",
  "callback",
  "secret",
  "readOnly",
  "method",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "unknown",
];

describe("classBinding (property)", () => {
  const toTarget = classBinding(Target);

  it("never throws but a 400, never pollutes a prototype, never replaces a method", () => {
    const body = fc.dictionary(fc.constantFrom(...KEYS), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 6,
    });
    fc.assert(
      fc.property(fc.oneof(body, fc.jsonValue({ maxDepth: 2 })), (value) => {
        // Through the text, as a request would bring it: `__proto__` becomes an own key.
        const parsed = parseJson(JSON.stringify(value));
        let instance: Target | undefined;
        try {
          instance = toTarget(parsed) as Target;
        } catch (error) {
          assert.ok(error instanceof HttpException, String(error));
          assert.equal(error.status.getValue(), 400);
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal(Object.getPrototypeOf(Target.prototype), Object.prototype);
        if (instance === undefined) return;
        assert.ok(instance instanceof Target);
        assert.equal(instance.method(), "kept");
        assert.equal(instance.callback(), "kept");
        assert.equal(typeof instance.toString, "function");
        assert.deepEqual(Object.keys(instance).sort(), ["callback", "count", "name"]);
        const source = parsed as Record<string, unknown>;
        for (const key of ["name", "count"] as const) {
          if (Object.hasOwn(source, key)) assert.deepEqual(instance[key], source[key]);
        }
      }),
      propertyOptions(500),
    );
  });
});
