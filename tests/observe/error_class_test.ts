// What `error.type` says of a thrown value: its class, never its message.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { errorClassOf } from "../../src/observe/error_class.ts";

describe("errorClassOf", () => {
  it("is the error's class, and _OTHER for what is not an error", () => {
    class RefusedError extends Error {}
    assert.equal(errorClassOf(new RefusedError("quotes the record")), "RefusedError");
    assert.equal(errorClassOf(new TypeError("x")), "TypeError");
    assert.equal(errorClassOf("text"), "_OTHER");
    assert.equal(errorClassOf({ name: "Error", message: "x" }), "_OTHER");
  });

  it("falls back on the error's name where its class has none", () => {
    const nameless = Object.assign(Object.create(Error.prototype), {
      constructor: { name: "" },
      name: "Named",
    });
    assert.equal(errorClassOf(nameless), "Named");
    const neither = Object.assign(Object.create(Error.prototype), {
      constructor: undefined,
      name: "",
    });
    assert.equal(errorClassOf(neither), "_OTHER");
  });
});
