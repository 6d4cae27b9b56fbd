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
    // The optional peers are imported at the range the tests run (their dev dependency).
    const dev = npm.devDependencies as Record<string, string>;
    const peers = Object.keys(npm.peerDependencies as Record<string, string>);
    const ranges = { ...dependencies, ...Object.fromEntries(peers.map((n) => [n, dev[n]])) };
    for (const [name, range] of Object.entries(ranges)) {
      assert.equal(
        imports[name],
        `npm:${name}@${range}`,
        `deno.json imports ${name} at another range`,
      );
    }
  });

  it("the drivers, the OpenSearch and Kafka clients, jose, undici, swagger-ui-dist, OpenTelemetry, redis and ws are optional peer dependencies, installed here for the tests", async () => {
    const npm = await json("package.json");
    const peers = npm.peerDependencies as Record<string, string>;
    const meta = npm.peerDependenciesMeta as Record<string, { optional?: boolean }>;
    const dev = npm.devDependencies as Record<string, string>;
    const dependencies = npm.dependencies as Record<string, string>;
    assert.deepEqual(Object.keys(peers).sort(), [
      "@opensearch-project/opensearch",
      "@opentelemetry/api",
      "@opentelemetry/exporter-prometheus",
      "@opentelemetry/sdk-metrics",
      "@platformatic/kafka",
      "jose",
      "mysql2",
      "pg",
      "pg-connection-string",
      "redis",
      "swagger-ui-dist",
      "undici",
      "ws",
    ]);
    for (const [name, range] of Object.entries(peers)) {
      assert.equal(meta[name]?.optional, true, `${name} is not optional`);
      // The peer range is wider than the tested one (tests/npm runs its lowest versions), and
      // admits the version the tests run.
      const [, major, minor, patch] = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(dev[name] ?? "") ?? [];
      assert.ok(major !== undefined, `${name}: no dev dependency of the form ^x.y.z`);
      const admits = range.split("||").some((alternative) => {
        const [, m, n, p] = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(alternative) ?? [];
        return m === major &&
          (Number(minor) - Number(n) || Number(patch) - Number(p)) >= 0;
      });
      assert.ok(admits, `${name}: the peer range ${range} does not admit ${dev[name]}`);
      assert.equal(dependencies[name], undefined, `${name} is a dependency too`);
    }
  });
});
