import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { VERSION } from "../src/version.ts";

async function json(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(new URL(`../${name}`, import.meta.url), "utf8"));
}

describe("package metadata", () => {
  it("jsr.json, deno.json and package.json agree", async () => {
    const [jsr, deno, npm] = await Promise.all([
      json("jsr.json"),
      json("deno.json"),
      json("package.json"),
    ]);
    for (const key of ["name", "version", "license", "exports", "publish"]) {
      assert.deepEqual(deno[key], jsr[key], `deno.json and jsr.json differ on ${key}`);
    }
    assert.equal(npm.name, jsr.name);
    assert.equal(npm.version, jsr.version);
    assert.equal(VERSION, jsr.version, "src/version.ts (stored in migration records) is stale");
    const imports = deno.imports as Record<string, string>;
    const dependencies = npm.dependencies as Record<string, string>;
    const peers = npm.peerDependencies as Record<string, string>;
    for (const [name, range] of Object.entries({ ...dependencies, ...peers })) {
      assert.equal(
        imports[name],
        `npm:${name}@${range}`,
        `deno.json imports ${name} at another range`,
      );
    }
  });

  it("the drivers and undici are optional peer dependencies, installed here for the tests", async () => {
    const npm = await json("package.json");
    const peers = npm.peerDependencies as Record<string, string>;
    const meta = npm.peerDependenciesMeta as Record<string, { optional?: boolean }>;
    const dev = npm.devDependencies as Record<string, string>;
    const dependencies = npm.dependencies as Record<string, string>;
    assert.deepEqual(Object.keys(peers).sort(), ["mysql2", "pg", "pg-connection-string", "undici"]);
    for (const [name, range] of Object.entries(peers)) {
      assert.equal(meta[name]?.optional, true, `${name} is not optional`);
      assert.equal(dev[name], range, `${name}: the dev dependency has another range`);
      assert.equal(dependencies[name], undefined, `${name} is a dependency too`);
    }
  });
});
