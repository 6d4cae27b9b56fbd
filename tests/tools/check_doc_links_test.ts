import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DOCS_URL, moduleLinkProblems } from "../../tools/check_doc_links.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const pages = (texts: Record<string, string>) => (name: string) => texts[name];
const GUIDE = "# Guide\n\n## Scheduled\n";

describe("the modules' links to the guides", () => {
  it("refuses a relative @see, naming the absolute link to write", () => {
    const text = "/**\n * Runs a method on a schedule.\n *\n * @see docs/guide.md#scheduled\n */\n";
    assert.deepEqual(moduleLinkProblems("src/x.ts", text, pages({ "guide.md": GUIDE })), {
      problems: [
        `src/x.ts:4: docs/guide.md#scheduled: the package does not ship docs/: write ` +
        `${DOCS_URL}guide.md#scheduled`,
      ],
      links: 1,
    });
  });

  it("checks an absolute link's page and heading as a relative one's", () => {
    const text = `/**\n * @see ${DOCS_URL}guide.md#scheduled\n * @see ${DOCS_URL}guide.md#cron\n` +
      ` * @see ${DOCS_URL}gone.md\n */\n`;
    assert.deepEqual(moduleLinkProblems("src/x.ts", text, pages({ "guide.md": GUIDE })), {
      problems: [
        `src/x.ts:3: ${DOCS_URL}guide.md#cron: docs/guide.md has no heading for #cron`,
        `src/x.ts:4: ${DOCS_URL}gone.md: no such file (docs/gone.md)`,
      ],
      links: 3,
    });
  });

  it("takes a repository path in a line comment of src/, and refuses one in an entry point's JSDoc", () => {
    const comment = "// The rules of docs/guide.md#scheduled.\nconst x = 1;\n";
    assert.deepEqual(moduleLinkProblems("src/x.ts", comment, pages({ "guide.md": GUIDE })), {
      problems: [],
      links: 1,
    });
    const entry = "/**\n * The guides: docs/guide.md.\n * @module\n */\n";
    assert.equal(
      moduleLinkProblems("mod.ts", entry, pages({ "guide.md": GUIDE })).problems.length,
      1,
    );
  });

  it("finds no relative @see in any module of src/", async () => {
    const files: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true })) {
        const path = `${dir}${entry.name}`;
        if (entry.isDirectory()) await walk(`${path}/`);
        else if (entry.name.endsWith(".ts")) files.push(path);
      }
    };
    await walk("src/");
    const offenders = [];
    for (const path of files) {
      const text = await readFile(join(ROOT, path), "utf8");
      if (/@see\s+docs\//.test(text)) offenders.push(path);
    }
    assert.deepEqual(offenders, []);
  });
});
