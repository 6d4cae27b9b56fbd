import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { importOptional, MissingPackageError } from "../../src/runtime/optional_module.ts";

// Held in variables, so no type checker or bundler tries to resolve them ahead of the import.
const MISSING = "thaw-no-such-package";
const MISSING_SUBPATH = "thaw-no-such-package/promise";
const need = {
  packages: [MISSING, "thaw-other"],
  neededBy: 'datasource "x"',
  what: "the test driver",
};

describe("importOptional, on this runtime's own module errors", () => {
  it("reports a package that is not installed with the line that installs it", async () => {
    for (const specifier of [MISSING, MISSING_SUBPATH]) {
      await assert.rejects(importOptional(() => import(specifier), need), (e) => {
        assert.ok(e instanceof MissingPackageError, `${specifier}: ${e}`);
        assert.equal(
          e.message,
          'datasource "x" needs the test driver: npm install thaw-no-such-package thaw-other',
        );
        assert.equal(e.install, "npm install thaw-no-such-package thaw-other");
        assert.deepEqual(e.packages, [MISSING, "thaw-other"]);
        assert.ok(e.cause instanceof Error, "the runtime's own error is kept as the cause");
        return true;
      });
    }
  });

  it("returns the module when it is there", async () => {
    const module = await importOptional(() => import("../fixtures/optional/loads.ts"), need);
    assert.equal(module.loaded, "yes");
  });

  it("lets through an error the module throws while loading", async () => {
    await assert.rejects(
      importOptional(() => import("../fixtures/optional/throws.ts"), need),
      (e) => {
        assert.ok(!(e instanceof MissingPackageError));
        assert.match(String(e), /fixture: fails while loading/);
        return true;
      },
    );
  });

  it("lets through a module that is there but misses another package (a broken install)", async () => {
    await assert.rejects(
      importOptional(() => import("../fixtures/optional/broken.ts"), need),
      (e) => {
        assert.ok(!(e instanceof MissingPackageError), String(e));
        assert.match(String((e as Error).message), /thaw-no-such-dependency/);
        return true;
      },
    );
  });

  it("lets through a missing package that is not one of those named", async () => {
    await assert.rejects(
      importOptional(() => import(MISSING), { ...need, packages: ["thaw-no-such"] }),
      (e) => !(e instanceof MissingPackageError),
    );
  });
});
