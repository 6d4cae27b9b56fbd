import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, realpath, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rawContentHash } from "../../../src/migrate/files/content_hash.ts";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import {
  MAX_MIGRATION_FILE_BYTES,
  readMigrationFiles,
} from "../../../src/migrate/files/migration_files.ts";
import { suiteTempDirs, tempDir } from "../../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

/** A migrations root holding `files`, paths given from the root (`main/a.json`). */
async function folder(files: Record<string, string>): Promise<string> {
  const root = await suiteDir("thaw-files-");
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

/** Paths of the `.json` files of connection `main` under `root`. */
async function paths(root: string, connection = "main"): Promise<string[]> {
  return (await readMigrationFiles(root, connection, ".json"))!.files.map((f) => f.path);
}

/** The message must quote `text` as it is, regular-expression characters included. */
const quoting = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * Lays out `files` in `mount` as kubelet mounts a ConfigMap: the real files in a timestamped
 * folder, `..data` pointing at it, and one relative link per key through `..data`.
 */
async function configMap(
  mount: string,
  files: Record<string, string>,
  stamp = "..2026_11_22_10_00_00.123456789",
): Promise<void> {
  await mkdir(join(mount, stamp), { recursive: true });
  for (const [key, text] of Object.entries(files)) await writeFile(join(mount, stamp, key), text);
  await symlink(stamp, join(mount, "..data"));
  for (const key of Object.keys(files)) await symlink(`..data/${key}`, join(mount, key));
}

describe("readMigrationFiles", () => {
  it("finds .json files in sub-folders, in version order of the relative path", async () => {
    const root = await folder({
      "main/b.json": "{}",
      "main/a/z.json": "{}",
      "main/B.json": "{}",
      "main/release-1.10/x.json": "{}",
      "main/release-1.9/x.json": "{}",
      "main/notes.txt": "",
      "main/a/readme.md": "",
      "main/é.json": "{}",
      "main/z.json": "{}",
      "other/o.json": "{}",
    });
    assert.deepEqual(await paths(root), [
      "B.json",
      "a/z.json",
      "b.json",
      "release-1.9/x.json",
      "release-1.10/x.json",
      "z.json",
      "é.json",
    ]);
  });

  it("takes the suffix in any case, and names every other file it leaves out", async () => {
    const root = await folder({
      "main/a.json": "{}",
      "main/B.JSON": "{}",
      "main/c.Json": "{}",
      "main/notes.txt": "",
      "main/d.json.bak": "{}",
      "main/json": "",
      "main/sub/readme.md": "",
      "main/.gitkeep": "",
      "main/.hidden/x.json": "{}",
    });
    const read = (await readMigrationFiles(root, "main", ".json"))!;
    assert.deepEqual(read.files.map((f) => f.path), ["B.JSON", "a.json", "c.Json"]);
    // Hidden entries stay unnamed: a ConfigMap mount holds its real files in `..<timestamp>/`.
    assert.deepEqual(read.ignored, ["d.json.bak", "json", "notes.txt", "sub/readme.md"]);
  });

  it("hashes the raw bytes: CRLF and a BOM are changes", async () => {
    const root = await folder({
      "main/lf.json": '{\n"a": 1\n}',
      "main/crlf.json": '{\r\n"a": 1\r\n}',
      "main/bom.json": '\ufeff{\n"a": 1\n}',
    });
    const { files } = (await readMigrationFiles(root, "main", ".json"))!;
    const hash = (p: string) => files.find((f) => f.path === p)!.hash;
    assert.equal(hash("lf.json"), await rawContentHash(new TextEncoder().encode('{\n"a": 1\n}')));
    assert.match(hash("lf.json"), /^[0-9a-f]{64}$/);
    assert.notEqual(hash("lf.json"), hash("crlf.json"));
    assert.notEqual(hash("lf.json"), hash("bom.json"));
  });

  it("tells a missing folder from an empty one, and refuses a file in place of the folder", async () => {
    const root = await folder({ "file.json": "{}" });
    assert.equal(await readMigrationFiles(root, "absent", ".json"), undefined);
    await mkdir(join(root, "empty"));
    assert.deepEqual(await readMigrationFiles(root, "empty", ".json"), { files: [], ignored: [] });
    await assert.rejects(
      readMigrationFiles(root, "file.json", ".json"),
      (e) => e instanceof MigrationFileError && /file\.json: is not a folder/.test(e.message),
    );
    // Through a link too: what counts is what it points at.
    await symlink("file.json", join(root, "main"));
    await assert.rejects(readMigrationFiles(root, "main", ".json"), /main: is not a folder/);
  });

  it("refuses an oversized file by its size, before reading it", async () => {
    const root = await folder({ "main/big.json": "" });
    await truncate(join(root, "main/big.json"), MAX_MIGRATION_FILE_BYTES + 1);
    await assert.rejects(
      readMigrationFiles(root, "main", ".json"),
      /big\.json: is \d+ bytes, over the limit/,
    );
  });

  // A FIFO would block the read; skipped without a word, a file someone meant to apply is lost.
  it("refuses a FIFO named as a migration, directly or through a link; skips other ones", async () => {
    const root = await folder({ "main/a.json": "{}" });
    const made = spawnSync("mkfifo", [join(root, "main/x.json"), join(root, "main/notes")]);
    assert.equal(made.status, 0, String(made.stderr));
    await assert.rejects(
      readMigrationFiles(root, "main", ".json"),
      (e: unknown) =>
        e instanceof MigrationFileError &&
        /^x\.json: is not a regular file \(a FIFO, a socket or a device\): a migration file must be one/
          .test(e.message),
    );
    await rm(join(root, "main/x.json"));
    assert.deepEqual(await paths(root), ["a.json"]);
    await symlink(join(root, "main/notes"), join(root, "main/y.json"));
    await assert.rejects(
      readMigrationFiles(root, "main", ".json"),
      /y\.json: is not a regular file/,
    );
  });
});

describe("readMigrationFiles through symbolic links", () => {
  it("reads a ConfigMap mount as its keys, each once, with the bytes and hash of the real file", async () => {
    const root = await folder({});
    const keys = { "1-users-index.json": '{"a": 1}', "2-logs-template.json": '{"b": 2}' };
    await configMap(join(root, "main"), { ...keys, "notes.txt": "" });
    const { files } = (await readMigrationFiles(root, "main", ".json"))!;
    assert.deepEqual(files.map((f) => f.path), Object.keys(keys));
    for (const [i, text] of Object.values(keys).entries()) {
      const bytes = new TextEncoder().encode(text);
      assert.deepEqual(files[i].bytes, bytes);
      assert.equal(files[i].hash, await rawContentHash(bytes));
    }
  });

  it("skips dot-files and dot-folders, links among them, wherever they are", async () => {
    const root = await folder({
      "main/a.json": "{}",
      "main/.hidden.json": "{}",
      "main/.git/x.json": "{}",
      "main/sub/.x.json": "{}",
      "main/sub/b.json": "{}",
    });
    // Not scanned, so not even checked: a dot-link may point anywhere.
    await symlink("/", join(root, "main", ".escape"));
    await symlink(join(root, "nowhere"), join(root, "main", "sub", ".dangling.json"));
    assert.deepEqual(await paths(root), ["a.json", "sub/b.json"]);
  });

  it("reads a connection folder that is a link inside the root, and refuses one leaving it", async () => {
    const root = await folder({ "mounts/main/a.json": "{}", "mounts/main/sub/b.json": "{}" });
    await symlink(join(root, "mounts", "main"), join(root, "main"));
    await symlink("mounts/main", join(root, "relative"));
    assert.deepEqual(await paths(root), ["a.json", "sub/b.json"]);
    assert.deepEqual(await paths(root, "relative"), ["a.json", "sub/b.json"]);

    const outside = await folder({ "a.json": "{}" });
    await symlink(outside, join(root, "away"));
    await assert.rejects(
      readMigrationFiles(root, "away", ".json"),
      (e) =>
        e instanceof MigrationFileError && e.file === join(root, "away") &&
        e.message.includes(`is a symbolic link to ${outside}, outside the migrations root`),
    );
  });

  it("follows links to files and folders elsewhere in the root, named by the link", async () => {
    const root = await folder({
      "main/a.json": "{}",
      "shared/common.json": "{}",
      "shared/lib/x.json": "{}",
      "store/blob.bin": "{}",
    });
    await symlink("../shared/common.json", join(root, "main", "common.json"));
    await symlink(join(root, "shared", "lib"), join(root, "main", "lib"));
    // The name decides: a link named .json is a migration whatever its target is called.
    await symlink("../store/blob.bin", join(root, "main", "blob.json"));
    assert.deepEqual(await paths(root), ["a.json", "blob.json", "common.json", "lib/x.json"]);
  });

  it("refuses a link to a file or a folder outside the root, naming the link and its target", async () => {
    const outside = await realpath(await folder({ "x.json": "{}", "dir/y.json": "{}" }));
    const cases: [string, string, string][] = [
      ["evil.json", join(outside, "x.json"), join(outside, "x.json")],
      ["sub", join(outside, "dir"), join(outside, "dir")],
      // Relative and through `..`: where it lands counts, not how it is written.
      ["up.json", `../../${outside.split("/").pop()}/x.json`, join(outside, "x.json")],
      // The root itself is inside; its parent is not.
      ["parent", "../..", await realpath(tmpdir())],
    ];
    for (const [name, target, resolved] of cases) {
      const root = await folder({ "main/a.json": "{}" });
      await symlink(target, join(root, "main", name));
      await assert.rejects(readMigrationFiles(root, "main", ".json"), (e) => {
        assert.ok(e instanceof MigrationFileError, String(e));
        assert.equal(e.file, name);
        assert.match(
          e.message,
          new RegExp(`^${quoting(name)}: is a symbolic link to ${quoting(resolved)}, outside`),
        );
        return true;
      });
    }
  });

  it("refuses a dangling link, whatever its name, naming it and where it points", async () => {
    for (const name of ["gone.json", "gone-folder"]) {
      const root = await folder({ "main/a.json": "{}" });
      await symlink("missing", join(root, "main", name));
      // Awaited before the read starts: awaited while it runs, its rejection could come with no
      // handler yet, which Deno reports as an uncaught error (one run in twenty or so).
      const real = await realpath(root);
      await assert.rejects(
        readMigrationFiles(root, "main", ".json"),
        new RegExp(
          `^MigrationFileError: ${quoting(name)}: is a symbolic link to ${
            quoting(join(real, "main", "missing"))
          }, which does not exist`,
        ),
      );
    }
    const root = await folder({});
    await symlink("missing", join(root, "main"));
    await assert.rejects(
      readMigrationFiles(root, "main", ".json"),
      (e) =>
        e instanceof MigrationFileError &&
        /main: is a symbolic link to .*missing, which does not exist/.test(e.message),
    );
  });

  it("refuses a folder loop, and stops", async () => {
    const root = await folder({ "main/sub/a.json": "{}" });
    await symlink("..", join(root, "main", "sub", "again"));
    await assert.rejects(
      readMigrationFiles(root, "main", ".json"),
      /^MigrationFileError: sub\/again: leads back to .*main, a folder that contains it: a symbolic link loop/,
    );

    // Up to the root, which holds the connection folder: a loop one level further.
    const high = await folder({ "main/a.json": "{}" });
    await symlink(high, join(high, "main", "top"));
    await assert.rejects(
      readMigrationFiles(high, "main", ".json"),
      /^MigrationFileError: top\/main: leads back to .*loop/,
    );

    // Links that point at each other never reach a file or folder.
    const pair = await folder({ "main/a.json": "{}" });
    await symlink("b.json", join(pair, "main", "c.json"));
    await symlink("c.json", join(pair, "main", "b.json"));
    await assert.rejects(
      readMigrationFiles(pair, "main", ".json"),
      /^MigrationFileError: b\.json: .*loop/,
    );
  });

  it("refuses one real file reached under two names, naming both: it would be recorded twice", async () => {
    const root = await folder({ "main/a.json": "{}", "main/r1/x.json": "{}" });
    await symlink("a.json", join(root, "main", "b.json"));
    await assert.rejects(
      readMigrationFiles(root, "main", ".json"),
      (e) =>
        e instanceof MigrationFileError && e.file === "b.json" &&
        /^b\.json: is the same file as a\.json/.test(e.message),
    );
    // The same for a folder: every file in it would be reached twice.
    const twice = await folder({ "main/r1/x.json": "{}" });
    await symlink("r1", join(twice, "main", "current"));
    await assert.rejects(
      readMigrationFiles(twice, "main", ".json"),
      /^MigrationFileError: r1: is the same folder as current/,
    );
  });

  it("checks the size of the link's target, not of the link", async () => {
    const root = await folder({ "store/big.bin": "", "main/a.json": "{}" });
    await truncate(join(root, "store", "big.bin"), MAX_MIGRATION_FILE_BYTES + 1);
    await symlink("../store/big.bin", join(root, "main", "big.json"));
    await assert.rejects(
      readMigrationFiles(root, "main", ".json"),
      new RegExp(
        `^MigrationFileError: big\\.json: is ${MAX_MIGRATION_FILE_BYTES + 1} bytes, over the limit`,
      ),
    );
  });

  it("works with the root given as a link, links written either way", async () => {
    const real = await folder({
      "main/a.json": "{}",
      "shared/s.json": "{}",
      "shared/t.json": "{}",
    });
    await using base = await tempDir("thaw-files-");
    const root = join(base.path, "migrations");
    await symlink(real, root);
    await symlink(join(real, "shared", "s.json"), join(real, "main", "s.json"));
    await symlink(join(root, "shared", "t.json"), join(real, "main", "t.json"));
    assert.deepEqual(await paths(root), ["a.json", "s.json", "t.json"]);

    // A ConfigMap mounted as the root, its items under main/: the connection folder is itself a
    // link through `..data`; and that root reached through a link of its own.
    const mount = await folder({});
    const stamp = "..2026_11_22_10_00_00.123456789";
    await mkdir(join(mount, stamp, "main"), { recursive: true });
    await writeFile(join(mount, stamp, "main", "x.json"), "{}");
    await symlink(stamp, join(mount, "..data"));
    await symlink("..data/main", join(mount, "main"));
    assert.deepEqual(await paths(mount), ["x.json"]);
    await symlink(mount, join(base.path, "mounted"));
    assert.deepEqual(await paths(join(base.path, "mounted")), ["x.json"]);
  });
});
