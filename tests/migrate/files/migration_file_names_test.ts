import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { readMigrationFiles } from "../../../src/migrate/files/migration_files.ts";
import { MigrationFileError } from "../../../src/migrate/migration_error.ts";
import { propertyOptions } from "../../property.ts";
import { suiteTempDirs } from "../../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

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
  const root = await suiteDir("thaw-names-");
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

// What makes a name display as another: the bidirectional marks, embeddings, overrides and
// isolates (Unicode's Bidi_Control, U+061C included), the line and paragraph separators, and U+FEFF
// (a byte order mark left at a name's start by an editor, invisible wherever it is).
const REORDERING: readonly number[] = [
  0x061c,
  0x200e,
  0x200f,
  ...Array.from({ length: 5 }, (_, i) => 0x202a + i),
  ...Array.from({ length: 4 }, (_, i) => 0x2066 + i),
  0x2028,
  0x2029,
  0xfeff,
  // Invisible where they stand, so that `V2__a` and `V2__\u200ba` look one name.
  0x00ad,
  0x034f,
  0x115f,
  0x1160,
  0x17b4,
  0x17b5,
  0x180e,
  0x200b,
  ...Array.from({ length: 5 }, (_, i) => 0x2060 + i),
  0x3164,
  0xffa0,
  0xfff9,
  0xfffa,
  0xfffb,
  0xe0001,
  0xe0020,
  0xe0041,
  0xe007f,
  // Default-ignorable too: deprecated format characters, musical and shorthand format controls,
  // and code points reserved for more of them.
  ...Array.from({ length: 6 }, (_, i) => 0x206a + i),
  0x1d173,
  0x1d17a,
  0x1bca0,
  0x1bca3,
  0xfff0,
  0xe0fff,
];

const RAW_REORDERING =
  /(?![\u200c\u200d\u180b-\u180d\u180f\ufe00-\ufe0f\u{e0100}-\u{e01ef}])[\p{Default_Ignorable_Code_Point}\u2028\u2029\ufff9-\ufffb]/u;

describe("a file name with a character that reorders or hides part of it", () => {
  it("is refused, the file named with the character escaped: every one of them", async () => {
    for (const code of REORDERING) {
      const c = String.fromCodePoint(code);
      for (const name of [`V2__a${c}b.json`, `${c}V2__a.json`, `V2__a.json${c}`]) {
        const error = await refusal((await folderWith(name))!);
        const printable = name.replace(
          c,
          code > 0xffff ? `\\u{${code.toString(16)}}` : escaped(code),
        );
        assert.equal(error.file, printable);
        assert.ok(error.message.startsWith(`${printable}: `), error.message);
        assert.ok(
          error.message.includes(`(U+${code.toString(16).padStart(4, "0").toUpperCase()})`),
          error.message,
        );
        assert.match(error.message, /rename it/);
        assert.doesNotMatch(error.message, RAW_REORDERING);
      }
    }
  });

  it("leaves the joiners and variation selectors that scripts and emoji need", async () => {
    for (
      const name of [
        "V2__family_\u{1f468}\u200d\u{1f469}.json",
        "V2__heart_\u2764\ufe0f.json",
        "V2__\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.json",
        "V2__\u1820\u180b.json",
      ]
    ) {
      const read = await readMigrationFiles((await folderWith(name))!, "main", ".json");
      assert.ok(read!.files.some((f) => f.path === name), JSON.stringify(name));
    }
  });

  it("is refused when two names of one folder differ only in how their letters are composed", async () => {
    // `é` as one character and as `e` and an accent: two files, one name to whoever reads it.
    const root = (await folderWith("R__caf\u00e9.json"))!;
    await writeFile(join(root, "main", "R__cafe\u0301.json"), "{}");
    const error = await refusal(root);
    // Spelled out, since printed as they are the two would look one.
    assert.equal(
      error.message,
      "R__caf\\u00e9.json: reads as R__cafe\\u0301.json beside it (the same letters, composed " +
        "another way): rename one",
    );
  });

  it("is refused in a folder's name", async () => {
    // `V2__\u202egnp.json` displays as `V2__nosj.png`: the override reverses what follows it.
    const inFolder = (await folderWith("V2__a.json", "release\u202e2"))!;
    assert.equal((await refusal(inFolder)).file, "release\\u202e2");
  });

  // Letters of every kind, right-to-left scripts included, spaces, punctuation and a surrogate
  // pair: none of them reorders a name on its own.
  const ordinary = fc.constantFrom(
    ..."aZ09 _-.,()é\u00a0中ع\u05d0",
    "\u{1f600}",
  );
  const ordinaryName = fc.string({ unit: ordinary, minLength: 1, maxLength: 30 })
    .filter((n) => !n.startsWith(".") && n !== "V1__ok.json");
  const reordering = fc.constantFrom(...REORDERING.map((code) => String.fromCodePoint(code)));

  it("property: a name holding any of them is refused; a name holding none is read", async () => {
    await fc.assert(
      fc.asyncProperty(
        ordinaryName,
        fc.option(fc.tuple(reordering, fc.nat()), { nil: undefined }),
        async (base, inserted) => {
          let name = base;
          if (inserted !== undefined) {
            const [c, at] = inserted;
            const i = at % (base.length + 1);
            name = base.slice(0, i) + c + base.slice(i);
          }
          const root = (await folderWith(name))!;
          if (inserted === undefined) {
            const read = await readMigrationFiles(root, "main", ".json");
            const listed = [...read!.files.map((f) => f.path), ...read!.ignored];
            assert.ok(listed.includes(name), `${JSON.stringify(name)} was not read`);
          } else {
            const error = await refusal(root);
            assert.doesNotMatch(error.message, RAW_REORDERING);
          }
        },
      ),
      propertyOptions(40),
    );
  });
});
