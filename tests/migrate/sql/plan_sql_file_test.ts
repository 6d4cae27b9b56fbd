import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Command } from "../../../src/migrate/command/command.ts";
import { rawContentHash, sqlContentHash } from "../../../src/migrate/files/content_hash.ts";
import { decideFiles } from "../../../src/migrate/plan/file_decisions.ts";
import { planSqlFile } from "../../../src/migrate/sql/plan_sql_file.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

async function plan(path: string, text: string) {
  const bytes = utf8(text);
  return await planSqlFile({ path, bytes, hash: await rawContentHash(bytes) }, undefined);
}

/** The checksum records written before BOMs and final line ends were forgiven hold. */
function earlierChecksum(text: string): Promise<string> {
  return rawContentHash(utf8(text.replace(/\r\n?/g, "\n")));
}

/** What `command` does with `text` at `V1__a.sql` when the record holds `recorded`. */
async function decide(text: string, recorded: string, command: Command = "migrate") {
  const decided = decideFiles(
    [await plan("V1__a.sql", text)],
    new Map([["V1__a.sql", recorded]]),
    command,
  );
  return decided.map((f) => f.action).join();
}

describe("planSqlFile: the checksum", () => {
  it("is the same with and without a BOM and a final line end", async () => {
    const plain = await plan("V1__a.sql", "create table a (id int);");
    const edited = await plan("V1__a.sql", "\ufeffcreate table a (id int);\r\n");
    assert.equal(edited.hash, plain.hash);
    assert.equal(plain.hash, await sqlContentHash(utf8("create table a (id int);")));
  });

  it("sends the text as it is: only the checksum forgives", async () => {
    assert.equal((await plan("V1__a.sql", "select 1;\r\n\r\n")).text, "select 1;\r\n\r\n");
  });
});

describe("a record written under the earlier checksum", () => {
  const sql = "create table a (id int);\ninsert into a values (1);\n";

  it("still matches the file unchanged, with no repair", async () => {
    const recorded = await earlierChecksum(sql);
    assert.equal(await decide(sql, recorded), "skip");
    assert.equal(await decide(sql, recorded, "validate"), "skip");
    assert.equal(await decide(sql.replaceAll("\n", "\r\n"), recorded), "skip");
  });

  it("matches it with a BOM or a final line end added or removed", async () => {
    const recorded = await earlierChecksum(sql);
    for (
      const edited of [
        `\ufeff${sql}`,
        sql.slice(0, -1),
        `${sql}\n`,
        `\ufeff${sql.slice(0, -1)}`,
        `\ufeff${sql.replaceAll("\n", "\r\n")}\r\n`,
      ]
    ) {
      assert.equal(await decide(edited, recorded), "skip", JSON.stringify(edited));
      assert.equal(await decide(edited, recorded, "status"), "skip", JSON.stringify(edited));
    }
    // Of a file that had a BOM and no final line end, too.
    const bare = `\ufeff${sql.slice(0, -1)}`;
    assert.equal(await decide(`${sql}`, await earlierChecksum(bare)), "skip");
  });

  it("sees a real edit as a change", async () => {
    const recorded = await earlierChecksum(sql);
    for (
      const edited of [
        sql.replace("(1)", "(2)"),
        `${sql}\n\n`,
        `\n${sql}`,
        sql.replace("\n", "\n\n"),
        `\ufeff\ufeff${sql}`,
      ]
    ) {
      assert.equal(await decide(edited, recorded), "changed", JSON.stringify(edited));
    }
  });

  it("is moved to the new checksum by repair, and left as it is by migrate and baseline", async () => {
    const recorded = await earlierChecksum(sql);
    assert.equal(await decide(`\ufeff${sql}`, recorded, "repair"), "record");
    assert.equal(await decide(`\ufeff${sql}`, recorded, "baseline"), "skip");
    // A record at the new checksum is the file's own: nothing for repair to do.
    assert.equal(
      await decide(`\ufeff${sql}`, (await plan("V1__a.sql", sql)).hash, "repair"),
      "skip",
    );
  });

  it("follows its file renamed, BOM and final line end aside", async () => {
    const decided = decideFiles(
      [await plan("V2__b.sql", `\ufeff${sql.slice(0, -1)}`)],
      new Map([["V1__a.sql", await earlierChecksum(sql)]]),
      "migrate",
    );
    assert.deepEqual(decided.map((f) => [f.path, f.action, f.renamedFrom]), [
      ["V2__b.sql", "rename", "V1__a.sql"],
    ]);
  });

  it("of a file with CRLF endings written before line endings were forgiven still matches", async () => {
    // The first records held the SHA-256 of the raw bytes.
    const crlf = sql.replaceAll("\n", "\r\n");
    assert.equal(await decide(crlf, await rawContentHash(utf8(crlf))), "skip");
  });
});
