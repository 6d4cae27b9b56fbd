import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, mkdtemp, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contentHash } from "../../src/migrate/content_hash.ts";
import { MigrationFileError } from "../../src/migrate/migration_error.ts";
import { MAX_MIGRATION_FILE_BYTES, readMigrationFiles } from "../../src/migrate/migration_files.ts";

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "thaw-files-"));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

describe("readMigrationFiles", () => {
  it("finds .json files in sub-folders, in version order of the relative path", async () => {
    const dir = await folder({
      "b.json": "{}",
      "a/z.json": "{}",
      "B.json": "{}",
      "release-1.10/x.json": "{}",
      "release-1.9/x.json": "{}",
      "notes.txt": "",
      "a/readme.md": "",
      "é.json": "{}",
      "z.json": "{}",
    });
    const files = (await readMigrationFiles(dir, ".json"))!;
    assert.deepEqual(files.map((f) => f.path), [
      "B.json",
      "a/z.json",
      "b.json",
      "release-1.9/x.json",
      "release-1.10/x.json",
      "z.json",
      "é.json",
    ]);
  });

  it("hashes the raw bytes: CRLF and a BOM are changes", async () => {
    const dir = await folder({
      "lf.json": '{\n"a": 1\n}',
      "crlf.json": '{\r\n"a": 1\r\n}',
      "bom.json": '\ufeff{\n"a": 1\n}',
    });
    const files = (await readMigrationFiles(dir, ".json"))!;
    const hash = (p: string) => files.find((f) => f.path === p)!.hash;
    assert.equal(hash("lf.json"), await contentHash(new TextEncoder().encode('{\n"a": 1\n}')));
    assert.match(hash("lf.json"), /^[0-9a-f]{64}$/);
    assert.notEqual(hash("lf.json"), hash("crlf.json"));
    assert.notEqual(hash("lf.json"), hash("bom.json"));
  });

  it("tells a missing folder from an empty one, and refuses a file in place of the folder", async () => {
    const dir = await folder({ "file.json": "{}" });
    assert.equal(await readMigrationFiles(join(dir, "absent"), ".json"), undefined);
    await mkdir(join(dir, "empty"));
    assert.deepEqual(await readMigrationFiles(join(dir, "empty"), ".json"), []);
    await assert.rejects(readMigrationFiles(join(dir, "file.json"), ".json"), MigrationFileError);
  });

  it("refuses symbolic links, which could reach outside the folder or loop", async () => {
    const dir = await folder({ "a.json": "{}" });
    await symlink("/etc/hostname", join(dir, "evil.json"));
    await assert.rejects(readMigrationFiles(dir, ".json"), /evil\.json: is a symbolic link/);
    const loop = await folder({ "sub/a.json": "{}" });
    await symlink(loop, join(loop, "sub", "again"));
    await assert.rejects(readMigrationFiles(loop, ".json"), /sub\/again: is a symbolic link/);
  });

  it("refuses an oversized file by its size, before reading it", async () => {
    const dir = await folder({ "big.json": "" });
    await truncate(join(dir, "big.json"), MAX_MIGRATION_FILE_BYTES + 1);
    await assert.rejects(
      readMigrationFiles(dir, ".json"),
      /big\.json: is \d+ bytes, over the limit/,
    );
  });
});
