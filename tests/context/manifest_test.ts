import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bootstrap } from "../../mod.ts";
import { scanComponents, scanExports } from "../../src/context/component_scan.ts";
import { renderManifest, runManifestCommand } from "../../src/context/manifest.ts";
import { call } from "../helpers.ts";
import { suiteTempDirs } from "../temp_dir.ts";

// Every folder suiteDir makes, removed after the file's tests.
const suiteDir = suiteTempDirs();

const root = fileURLToPath(new URL("../../", import.meta.url));
const mod = pathToFileURL(join(root, "mod.ts")).href;

/** Runs `cli.ts manifest` in-process and keeps what it prints. */
async function manifest(cwd: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runManifestCommand(args, {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    cwd,
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** A folder of bean classes with two same-named exports, a default export and a re-export. */
async function beans(): Promise<string> {
  const dir = await suiteDir("thaw-manifest-");
  await mkdir(join(dir, "src", "admin"), { recursive: true });
  // An ES module project, as on Node a TypeScript project with decorators is.
  await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
  await writeFile(
    join(dir, "src", "names.ts"),
    `import { Service } from ${JSON.stringify(mod)};\n` +
      `@Service()\nexport class Names { list() { return ["Ada"]; } }\n`,
  );
  await writeFile(
    join(dir, "src", "admin", "names.ts"),
    `import { Component } from ${JSON.stringify(mod)};\n` +
      `@Component("adminNames")\nexport class Names { list() { return ["root"]; } }\n`,
  );
  await writeFile(
    join(dir, "src", "controller.ts"),
    `import { Autowired, GetMapping, RestController } from ${JSON.stringify(mod)};\n` +
      `import { Names } from "./names.ts";\n` +
      `export { Names as AlsoNames } from "./names.ts";\n` +
      `@RestController()\nexport default class NameController {\n` +
      `  @Autowired(Names) names!: Names;\n` +
      `  @GetMapping("/names") list() { return this.names.list(); }\n}\n`,
  );
  return dir;
}

describe("component manifest (cli.ts manifest)", () => {
  it("lists what scanning finds, controllers apart, and the app it wires answers the same", async () => {
    const dir = await beans();
    const run = await manifest(dir, "src", "--out", "thaw_manifest.ts");
    assert.equal(run.code, 0, run.err);
    assert.match(run.err, /wrote .*thaw_manifest\.ts: \d+ bean class/);
    const text = await readFile(join(dir, "thaw_manifest.ts"), "utf8");
    // Same-named classes are told apart, the default export gets the class's name, and a class
    // exported twice is imported once.
    assert.match(text, /import \{ default as NameController \} from "\.\/src\/controller\.ts";/);
    assert.match(text, /import \{ Names \} from "\.\/src\/admin\/names\.ts";/);
    assert.match(text, /import \{ Names as Names2 \} from "\.\/src\/names\.ts";/);
    assert.doesNotMatch(text, /AlsoNames/);
    const generated = await import(pathToFileURL(join(dir, "thaw_manifest.ts")).href);
    assert.deepEqual(generated.controllers.map((c: { name: string }) => c.name), [
      "NameController",
    ]);
    assert.deepEqual(
      new Set([...generated.controllers, ...generated.components]),
      new Set(await scanComponents([join(dir, "src")])),
    );
    const app = await bootstrap(generated);
    assert.deepEqual(await (await call(app, "GET", "/names")).json(), ["Ada"]);
  });

  it("writes imports relative to the output file, and to stdout without --out", async () => {
    const dir = await beans();
    await mkdir(join(dir, "gen"));
    assert.equal((await manifest(dir, "src", "-o", "gen/beans.ts")).code, 0);
    assert.match(
      await readFile(join(dir, "gen", "beans.ts"), "utf8"),
      /from "\.\.\/src\/names\.ts"/,
    );
    const printed = await manifest(join(dir, "src"), ".");
    assert.equal(printed.code, 0);
    assert.match(printed.out, /from "\.\/names\.ts"/);
  });

  it("keeps examples/users/thaw_manifest.ts in step with examples/users/src", async () => {
    const outDir = join(root, "examples", "users");
    const committed = await readFile(join(outDir, "thaw_manifest.ts"), "utf8");
    const command = committed.split("\n")[1].replace(/^\/\/\s+/, "");
    const fresh = renderManifest(await scanExports([join(outDir, "src")]), outDir, command);
    assert.equal(committed, fresh, "regenerate it: see examples/users/worker.ts");
  });

  it("exits 2 with the reason on a wrong command line, a missing folder or a module that fails", async () => {
    const dir = await beans();
    const none = await manifest(dir);
    assert.deepEqual([none.code, /no directory given/.test(none.err)], [2, true]);
    const flag = await manifest(dir, "src", "--bogus");
    assert.deepEqual([flag.code, /Unknown option '--bogus'/.test(flag.err)], [2, true]);
    const emptyOut = await manifest(dir, "src", "--out=");
    assert.deepEqual([emptyOut.code, /--out needs a file/.test(emptyOut.err)], [2, true]);
    const missing = await manifest(dir, "../no-such-dir");
    assert.equal(missing.code, 2);
    assert.match(missing.err, /no-such-dir is not a directory/);
    await writeFile(join(dir, "src", "broken.ts"), "export const x = ;\n");
    const broken = await manifest(dir, "src", "--out", "m.ts");
    assert.equal(broken.code, 2);
    assert.match(broken.err, /could not import .*broken\.ts/);
    await assert.rejects(readFile(join(dir, "m.ts")), "nothing written after a failure");
    const unwritable = await manifest(
      root,
      "tests/fixtures/scan",
      "--out",
      join(dir, "no", "m.ts"),
    );
    assert.equal(unwritable.code, 2);
    assert.match(unwritable.err, /cannot write .*no[\\/]m\.ts/);
  });
});
