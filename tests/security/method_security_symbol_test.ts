// `@Secured` and `@PreAuthorize` on a method named by a symbol: the container wraps the methods
// it finds by their string names, so such a method would keep no check at all, and run for any
// caller. The decorators refuse it where the class is written, as they refuse a private one.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { PreAuthorize, Secured } from "../../security.ts";

const OPERATION = Symbol("operation");

describe("method security on a method named by a symbol", () => {
  it("is refused where the class is written, never dropped", () => {
    assert.throws(
      () => {
        class Vault {
          @Secured("ROLE_ADMIN")
          [OPERATION](): string {
            return "SECRET";
          }
        }
        return Vault;
      },
      { name: "TypeError", message: /Interceptors on Symbol\(operation\): .*named by a string/ },
    );
    assert.throws(
      () => {
        class Vault {
          @PreAuthorize(() => false)
          [OPERATION](): string {
            return "SECRET";
          }
        }
        return Vault;
      },
      { name: "TypeError", message: /Interceptors on Symbol\(operation\)/ },
    );
  });
});
