import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { isCodeFile, isCodePath } from "../../../src/migrate/code/code_file.ts";
import { propertyOptions } from "../../property.ts";

describe("isCodePath", () => {
  it("takes .ts and .js, in lowercase as runtimes read them, and no type declaration", () => {
    for (const path of ["V1__a.ts", "sub/R__b.js", "a.b.ts", "x.D.ts"]) {
      assert.equal(isCodePath(path), true, path);
    }
    for (
      const path of [
        "V1__a.sql",
        "V1__a.TS",
        "V1__a.JS",
        "x.d.ts",
        "lib/x.d.ts",
        "a.tsx",
        "a.mjs",
        "ts",
      ]
    ) {
      assert.equal(isCodePath(path), false, path);
    }
  });

  it("reads the last segment only: a folder named like a file changes nothing", () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[^/]+$/), { maxLength: 3 }),
        fc.stringMatching(/^[^/]+$/),
        (folders, name) => {
          const path = [...folders, name].join("/");
          assert.equal(isCodePath(path), isCodePath(name));
        },
      ),
      propertyOptions(),
    );
  });
});

describe("isCodeFile", () => {
  it("tells a planned code file from a planned SQL or JSON one", () => {
    const base = { path: "V1__a.ts", hash: "h", runOnce: true };
    assert.equal(
      isCodeFile({ ...base, code: { kind: "file", url: "file:///V1__a.ts" } } as never),
      true,
    );
    assert.equal(isCodeFile({ ...base, text: "SELECT 1" } as never), false);
    assert.equal(isCodeFile({ ...base, code: undefined } as never), false);
  });
});
