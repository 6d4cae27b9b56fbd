import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, DefinitionError } from "../../mod.ts";
import { call } from "../helpers.ts";

const fixtures = new URL("../fixtures/scan/", import.meta.url);

describe("component scanning", () => {
  it("finds exported beans in every sub-folder and wires them", async () => {
    const app = await bootstrap({ scan: [fixtures] });
    const res = await call(app, "GET", "/greet/Ada");
    assert.equal(await res.text(), "Hello, Ada!");
    assert.equal((await call(app, "GET", "/hidden")).status, 404);
  });

  it("reads app.component-scan relative to application.yml", async () => {
    const app = await bootstrap({ config: new URL("application.yml", fixtures) });
    assert.equal(await (await call(app, "GET", "/greet/Bo")).text(), "Hello, Bo!");
  });

  it("names a directory that does not exist", async () => {
    await assert.rejects(
      bootstrap({ scan: [new URL("./no-such-dir/", fixtures)] }),
      (e: unknown) =>
        e instanceof DefinitionError && /no-such-dir is not a directory/.test(e.message),
    );
  });
});
