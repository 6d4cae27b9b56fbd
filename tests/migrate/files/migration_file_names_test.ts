import assert from "node:assert/strict";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { readMigrationFiles } from "../../../src/migrate/files/migration_files.ts";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";

// Every C0 control, DEL and every C1 control: a name holding one would be printed, recorded and
// (search) turned into an index name with that character in it.
const CONTROLS: readonly number[] = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  0x7f,
  ...Array.from({ length: 0x20 }, (_, i) => 0x80 + i),
];

const escaped = (code: number) => `\\u${code.toString(16).padStart(4, "0")}`;

// deno-lint-ignore no-control-regex -- what must not reach a message
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A connection folder `main` holding a valid file and `name` (in `sub` when given), or undefined
 * when the file system will not take the name (NUL, on every system this runs on).
 */
async function folderWith(name: string, sub?: string): Promise<string | undefined> {
  const root = await mkdtemp(join(tmpdir(), "thaw-names-"));
  const main = join(root, "main");
  await mkdir(main);
  await writeFile(join(main, "V1__ok.json"), "{}");
  try {
    if (sub === undefined) await writeFile(join(main, name), "{}");
    else {
      await mkdir(join(main, sub));
      await writeFile(join(main, sub, name), "{}");
    }
  } catch {
    return undefined;
  }
  return root;
}

async function refusal(root: string): Promise<MigrationFileError> {
  try {
    await readMigrationFiles(root, "main", ".json");
  } catch (error) {
    assert.ok(error instanceof MigrationFileError, String(error));
    return error;
  }
  assert.fail("the folder was read");
}

describe("a file name with a control character", () => {
  it("is refused, the file named with the character escaped: every C0, DEL and C1 control", async () => {
    const uncreatable: number[] = [];
    for (const code of CONTROLS) {
      const c = String.fromCharCode(code);
      for (const name of [`V2__a${c}b.json`, `${c}V2__a.json`, `V2__a.json${c}`]) {
        const root = await folderWith(name);
        if (root === undefined) {
          uncreatable.push(code);
          continue;
        }
        const error = await refusal(root);
        const printable = name.replace(c, escaped(code));
        assert.equal(error.file, printable);
        assert.ok(error.message.startsWith(`${printable}: `), error.message);
        assert.ok(
          error.message.includes(`(U+${code.toString(16).padStart(4, "0").toUpperCase()})`),
        );
        assert.doesNotMatch(error.message, RAW_CONTROL);
      }
    }
    // NUL ends a name in every file system API: it is the only one that cannot be created.
    assert.deepEqual([...new Set(uncreatable)], [0]);
  });

  it("is refused in a folder's name and in a file that is no migration, which status would list", async () => {
    const inFolder = (await folderWith("V2__a.json", "release\n2"))!;
    assert.equal((await refusal(inFolder)).file, "release\\u000a2");
    const other = (await folderWith("notes\u001b[31m.txt"))!;
    assert.equal((await refusal(other)).file, "notes\\u001b[31m.txt");
  });

  it("leaves other names alone: unicode, spaces and U+00A0", async () => {
    const root = (await folderWith("V2__é ü\u00a0x.json"))!;
    const read = await readMigrationFiles(root, "main", ".json");
    assert.deepEqual(read!.files.map((f) => f.path), ["V1__ok.json", "V2__é ü\u00a0x.json"]);
  });
});
