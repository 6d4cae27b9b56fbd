import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "./temp_dir.ts";

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
