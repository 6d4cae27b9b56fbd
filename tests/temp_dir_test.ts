import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { suiteTempDirs, tempDir } from "./temp_dir.ts";

describe("tempDir", () => {
  it("removes the folder and what it holds when the block ends", async () => {
    let path: string;
    {
      await using dir = await tempDir("thaw-temp-dir-");
      path = dir.path;
      assert.match(path, /thaw-temp-dir-[^/\\]+$/);
      await writeFile(join(dir.path, "file.txt"), "x");
      assert.equal(existsSync(join(path, "file.txt")), true);
    }
    assert.equal(existsSync(path), false);
  });

  it("removes it when the block throws, and the error is the block's", async () => {
    let path = "";
    await assert.rejects(async () => {
      await using dir = await tempDir();
      path = dir.path;
      throw new Error("the block's");
    }, /the block's/);
    assert.equal(existsSync(path), false);
  });
});

describe("suiteTempDirs", () => {
  const made: string[] = [];
  describe("a suite that makes folders", () => {
    const folder = suiteTempDirs();
    it("makes a new folder at each call, kept through the suite", async () => {
      made.push(await folder("thaw-suite-a-"), await folder("thaw-suite-b-"));
      await writeFile(join(made[0], "file.txt"), "x");
      assert.notEqual(made[0], made[1]);
    });
    it("still has them in the suite's next test", () => {
      assert.deepEqual(made.map(existsSync), [true, true]);
    });
  });
  it("has removed them once that suite is done", () => {
    assert.equal(made.length, 2);
    assert.deepEqual(made.map(existsSync), [false, false]);
  });
});
