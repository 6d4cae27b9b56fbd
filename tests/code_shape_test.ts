// The shape of src/ held to budgets, from tools/code_shape.ts's figures: a change that grows a
// function, a file, a class's state or the public surface past its budget fails the build, rather
// than a note finding it later. Lower a budget when the code allows it; never raise one to let a
// change in.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { RUNTIME } from "./runtime.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** What tools/code_shape.ts --json prints. */
interface CodeShape {
  readonly longestFunctions: readonly { lines: number; name: string; where: string }[];
  readonly files: readonly { lines: number; file: string }[];
  readonly nonNull: number;
  readonly moduleLets: readonly { where: string; commented: boolean }[];
  readonly modExports: number;
  readonly classes: readonly { fields: number; name: string; where: string }[];
}

/** The budgets: each a most, for all of src/ unless a folder is named. */
export const BUDGETS = {
  functionLines: 80,
  fileLines: 600,
  nonNull: 40,
  moduleLets: 12,
  modExports: 100,
  mutableFields: 10,
  // The Kafka listener's rooms stay small: a class over this is a room that should split.
  kafkaMutableFields: 8,
} as const;

// The measure runs `deno lint` with a plugin of its own: on every runtime, the Deno the suite
// installs (npm's `deno` package) runs it.
function measure(): Promise<CodeShape> {
  const deno = RUNTIME === "deno" ? process.execPath : join(ROOT, "node_modules", ".bin", "deno");
  return new Promise((resolve, reject) => {
    execFile(
      deno,
      ["run", "--allow-read", "--allow-write", "--allow-run", "tools/code_shape.ts", "--json"],
      { cwd: ROOT, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`tools/code_shape.ts failed: ${stderr}`));
        else resolve(JSON.parse(stdout) as CodeShape);
      },
    );
  });
}

describe("the shape of src/", () => {
  it("keeps to its budgets", async () => {
    const shape = await measure();
    const over = <T>(items: readonly T[], too: (item: T) => boolean) => items.filter(too);
    assert.deepEqual(
      over(shape.longestFunctions, (f) => f.lines > BUDGETS.functionLines),
      [],
      `functions over ${BUDGETS.functionLines} lines`,
    );
    assert.deepEqual(
      over(shape.files, (f) => f.lines > BUDGETS.fileLines),
      [],
      `files over ${BUDGETS.fileLines} lines`,
    );
    assert.ok(
      shape.nonNull <= BUDGETS.nonNull,
      `${shape.nonNull} non-null assertions (x!), over ${BUDGETS.nonNull}`,
    );
    assert.ok(
      shape.moduleLets.length <= BUDGETS.moduleLets,
      `${shape.moduleLets.length} module-level lets, over ${BUDGETS.moduleLets}: ` +
        shape.moduleLets.map((l) => l.where).join(", "),
    );
    assert.deepEqual(
      shape.moduleLets.filter((l) => !l.commented).map((l) => l.where),
      [],
      "module-level lets with no comment saying why",
    );
    assert.ok(
      shape.modExports <= BUDGETS.modExports,
      `mod.ts exports ${shape.modExports} names, over ${BUDGETS.modExports}`,
    );
    assert.deepEqual(
      over(shape.classes, (c) => c.fields > BUDGETS.mutableFields),
      [],
      `classes with over ${BUDGETS.mutableFields} mutable fields`,
    );
    assert.deepEqual(
      over(
        shape.classes,
        (c) => c.where.startsWith("src/kafka/") && c.fields > BUDGETS.kafkaMutableFields,
      ),
      [],
      `classes of src/kafka/ with over ${BUDGETS.kafkaMutableFields} mutable fields`,
    );
  });

  it("measures what it says: every figure is there, and a class's fields are counted", async () => {
    const shape = await measure();
    assert.ok(shape.longestFunctions.length > 0 && shape.files.length > 100);
    // ListenerMember's state, as its file declares it: a measure that counted nothing would pass
    // every budget.
    const member = shape.classes.find((c) => c.name === "ListenerMember");
    assert.ok(member !== undefined && member.fields >= 1, JSON.stringify(member));
    assert.ok(shape.files.some((f) => f.file === "src/application.ts"));
  });
});
