import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { statfs } from "node:fs/promises";
import { join, resolve } from "node:path";
import process from "node:process";
import { diskSpaceIndicator } from "../../src/actuator/disk_space_health.ts";
import type { ComponentHealth } from "../../src/actuator/health.ts";
import { tempDir } from "../temp_dir.ts";

async function checked(path: string, threshold: number): Promise<ComponentHealth> {
  return await diskSpaceIndicator(path, threshold).check();
}

describe("the diskSpace component", () => {
  it("is UP with Spring's details while the free space is at least the threshold", async () => {
    await using dir = await tempDir("thaw-disk-");
    const health = await checked(dir.path, 0);
    assert.equal(health.status, "UP");
    const details = health.details as Record<string, unknown>;
    assert.deepEqual(Object.keys(details).sort(), ["exists", "free", "path", "threshold", "total"]);
    assert.equal(details.path, resolve(dir.path));
    assert.equal(details.exists, true);
    assert.equal(details.threshold, 0);
    // The file system's own figures, as statfs gives them to this process.
    const stats = await statfs(dir.path);
    assert.equal(details.total, stats.blocks * stats.bsize);
    assert.ok(typeof details.free === "number" && details.free > 0);
    assert.ok((details.free as number) <= (details.total as number));
  });

  it("is DOWN, with the same details, once the free space is below the threshold", async () => {
    // No disk has this much free space.
    const threshold = Number.MAX_SAFE_INTEGER;
    const health = await checked(".", threshold);
    assert.equal(health.status, "DOWN");
    assert.equal(health.details?.threshold, threshold);
    assert.equal(health.details?.path, process.cwd());
    assert.equal(health.details?.exists, true);
  });

  it("is DOWN for a folder that does not exist, as Spring's: no space there", async () => {
    await using dir = await tempDir("thaw-disk-");
    const missing = join(dir.path, "gone");
    assert.deepEqual(await checked(missing, 1), {
      status: "DOWN",
      details: { total: 0, free: 0, threshold: 1, path: missing, exists: false },
    });
  });

  it("is named diskSpace, and reports the component itself", () => {
    const indicator = diskSpaceIndicator(".", 10);
    assert.equal(indicator.name, "diskSpace");
    assert.deepEqual(indicator.builtIn, {});
  });
});
