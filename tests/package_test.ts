import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { VERSION } from "../src/version.ts";

async function json(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(new URL(`../${name}`, import.meta.url), "utf8"));
}

describe("package metadata", () => {
  it("deno.json's exports are the one list of entry points: the root's .ts files, no more", async () => {
    const { readdir } = await import("node:fs/promises");
    const deno = await json("deno.json");
    const exported = Object.values(deno.exports as Record<string, string>)
      .map((file) => file.replace(/^\.\//, ""));
    const root = (await readdir(".")).filter((name) => name.endsWith(".ts"));
    // package.json's lint, deno.json's publish and tsconfig.build.json read them as `*.ts`.
    assert.deepEqual(root.sort(), [...exported].sort());
    const publish = deno.publish as { include: string[] };
    assert.ok(publish.include.includes("*.ts"));
    const npm = await json("package.json");
    const lint = (npm.scripts as Record<string, string>).lint;
    assert.doesNotMatch(lint, /\bmod\.ts\b/, "the lint names the entry points one by one");
    const build = await json("tsconfig.build.json");
    assert.deepEqual(build.include, ["*.ts"]);
  });

  it("deno.json (which JSR publishes) and package.json agree", async () => {
    const [deno, npm] = await Promise.all([json("deno.json"), json("package.json")]);
    assert.equal(npm.name, deno.name);
    assert.equal(npm.version, deno.version);
    assert.equal(VERSION, deno.version, "src/version.ts (stored in migration records) is stale");
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

  it("the drivers, the OpenSearch, Kafka and SQS clients, jose, undici, swagger-ui-dist, OpenTelemetry, redis and ws are optional peer dependencies, installed here for the tests", async () => {
    const npm = await json("package.json");
    const peers = npm.peerDependencies as Record<string, string>;
    const meta = npm.peerDependenciesMeta as Record<string, { optional?: boolean }>;
    const dev = npm.devDependencies as Record<string, string>;
    const dependencies = npm.dependencies as Record<string, string>;
    assert.deepEqual(Object.keys(peers).sort(), [
      "@aws-sdk/client-sqs",
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
