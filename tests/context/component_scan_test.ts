import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bootstrap, ConfigError, DefinitionError, NoSuchBeanError } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { scanComponents } from "../../scan.ts";
import { call } from "../helpers.ts";
import { tempDir } from "../temp_dir.ts";

const fixtures = new URL("../fixtures/scan/", import.meta.url);
const fixtureConfig = fileURLToPath(new URL("application.yml", fixtures));
const mod = new URL("../../mod.ts", import.meta.url).href;

/** A folder with `application.yml` and a `beans` folder holding one controller. */
async function project(yaml: string, run: (dir: string) => Promise<void>): Promise<void> {
  await using dir = await tempDir("thaw-scan-");
  // An ES module project, as on Node a TypeScript project with decorators is.
  await writeFile(join(dir.path, "package.json"), '{ "type": "module" }\n');
  await mkdir(join(dir.path, "beans"));
  await writeFile(
    join(dir.path, "beans", "hello_controller.ts"),
    `import { GetMapping, RestController } from ${JSON.stringify(mod)};\n` +
      `@RestController()\nexport class HelloController {\n` +
      `  @GetMapping("/hello") hello() { return "hello from beans"; }\n}\n`,
  );
  await writeFile(join(dir.path, "application.yml"), yaml);
  await run(dir.path);
}

/** Asserts that `promise` rejects with an error of `type` whose message contains every part. */
async function rejectsNaming(
  promise: Promise<unknown>,
  type: new (...args: never[]) => Error,
  ...parts: string[]
): Promise<string> {
  let message = "";
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof type, String(e));
    for (const part of parts) assert.ok(e.message.includes(part), `${part} in: ${e.message}`);
    message = e.message;
    return true;
  });
  return message;
}

describe("component scanning", () => {
  it("finds exported beans in every sub-folder and wires them", async () => {
    const app = await bootstrap({ components: await scanComponents([fixtures]) });
    const res = await call(app, "GET", "/greet/Ada");
    assert.equal(await res.text(), "Hello, Ada!");
    assert.equal((await call(app, "GET", "/hidden")).status, 404);
  });

  it("reads app.component-scan relative to application.yml", async () => {
    const config = await loadConfig(new URL("application.yml", fixtures));
    const app = await bootstrap({ config, components: await scanComponents(config) });
    assert.equal(await (await call(app, "GET", "/greet/Bo")).text(), "Hello, Bo!");
  });

  it("tells to export a decorated class that scanning could not see, which a bean needs", async () => {
    await using dir = await tempDir("thaw-scan-");
    await writeFile(join(dir.path, "package.json"), '{ "type": "module" }\n');
    await writeFile(
      join(dir.path, "greeter.ts"),
      `import { Service } from ${JSON.stringify(mod)};\n` +
        `@Service()\nclass Greeter {\n  greet() { return "hi"; }\n}\n` +
        `export const unrelated = 1;\nexport function make() { return new Greeter(); }\n`,
    );
    await writeFile(
      join(dir.path, "greeting_controller.ts"),
      `import { Autowired, GetMapping, RestController } from ${JSON.stringify(mod)};\n` +
        `import { make } from "./greeter.ts";\n` +
        `const Greeter = make().constructor;\n` +
        `@RestController()\nexport class GreetingController {\n` +
        `  @Autowired(Greeter) greeter;\n` +
        `  @GetMapping("/hi") hi() { return this.greeter.greet(); }\n}\n`,
    );
    const components = await scanComponents([pathToFileURL(dir.path)]);
    assert.deepEqual(components.map((c) => c.name), ["GreetingController"]);
    const message = await rejectsNaming(
      bootstrap({ components }),
      NoSuchBeanError,
      "No bean of class Greeter for @Autowired(Greeter) on field 'greeter' of class GreetingController",
      "Greeter is decorated with @Service() but was not registered",
      "export it from its module",
    );
    assert.ok(!message.includes("decorate Greeter with"), message);
  });

  it("names a directory that does not exist", async () => {
    await assert.rejects(
      scanComponents([new URL("./no-such-dir/", fixtures)]),
      (e: unknown) =>
        e instanceof DefinitionError && /no-such-dir is not a directory/.test(e.message),
    );
  });
});

describe("scanComponents(config)", () => {
  it("resolves app.component-scan against the file's directory, not the working one", async () => {
    for (const yaml of ["app:\n  component-scan: beans\n", "app:\n  component-scan: [./beans]\n"]) {
      await project(yaml, async (dir) => {
        const config = await loadConfig(join(dir, "application.yml"));
        const components = await scanComponents(config);
        assert.deepEqual(components.map((c) => c.name), ["HelloController"]);
        const app = await bootstrap({ config, components });
        assert.equal(await (await call(app, "GET", "/hello")).text(), "hello from beans");
        // The same directory, given as a list, is read from the working directory.
        await rejectsNaming(scanComponents(["beans"]), DefinitionError, "is not a directory");
      });
    }
  });

  it("returns the same classes as scanning the directories themselves", async () => {
    const config = await loadConfig(fixtureConfig);
    assert.deepEqual(await scanComponents(config), await scanComponents([fixtures]));
    assert.deepEqual(
      (await scanComponents(config)).map((c) => c.name).sort(),
      ["Greeter", "GreetingController"],
    );
  });

  it("finds nothing in a file without app.component-scan", async () => {
    await project("server:\n  port: 1\n", async (dir) => {
      const config = await loadConfig(join(dir, "application.yml"));
      assert.deepEqual(await scanComponents(config), []);
      await bootstrap({ config });
    });
  });

  it("names the file of an app.component-scan that is not a path nor a list of them", async () => {
    await project("app:\n  component-scan: 7\n", async (dir) => {
      const config = await loadConfig(join(dir, "application.yml"));
      await rejectsNaming(
        scanComponents(config),
        ConfigError,
        `${join(dir, "application.yml")}:2: app.component-scan must be a text or a list of texts`,
      );
    });
  });

  it("names the file and line of an app.component-scan directory that is missing", async () => {
    await project("server:\n  port: 1\napp:\n  component-scan: [beans, gone]\n", async (dir) => {
      const file = join(dir, "application.yml");
      await rejectsNaming(
        scanComponents(await loadConfig(file)),
        DefinitionError,
        `${file}:4: app.component-scan: Component scan: ${join(dir, "gone")} is not a directory`,
      );
    });
  });

  it("refuses a bare string or URL, and what is neither a list nor a configuration", async () => {
    for (const one of ["src", pathToFileURL("src")]) {
      await rejectsNaming(
        scanComponents(one as never),
        TypeError,
        "scanComponents takes a list of directories, what loadConfig returns or a configuration " +
          "object, got one directory: put it in a list",
      );
    }
    for (const other of [null, undefined, 3]) {
      await rejectsNaming(scanComponents(other as never), TypeError, `got ${other}`);
    }
  });

  it("scans a configuration object's app.component-scan, relative to base, and bootstrap takes it", async () => {
    const config = { app: { "component-scan": ["scan"] } };
    const components = await scanComponents(config, fileURLToPath(new URL("..", fixtures)));
    assert.deepEqual(
      components.map((c) => c.name).sort(),
      (await scanComponents([fixtures])).map((c) => c.name).sort(),
    );
    const app = await bootstrap({ config, components });
    assert.ok(components.length > 0 && app.getBean(components[0]) instanceof components[0]);
    // Another object with the same keys was not scanned.
    await assert.rejects(
      bootstrap({ config: { app: { "component-scan": ["scan"] } }, components }),
      ConfigError,
    );
  });
});

describe("bootstrap with app.component-scan", () => {
  it("refuses a loaded file whose directories were not scanned, naming the file and line", async () => {
    const config = await loadConfig(fixtureConfig);
    const message = await rejectsNaming(
      bootstrap({ config }),
      ConfigError,
      `${fixtureConfig}:4: app.component-scan: scanning needs a file system`,
      'import { scanComponents } from "@thaw/thaw/scan"',
      "components: await scanComponents(config)",
    );
    assert.ok(message.startsWith(`${fixtureConfig}:4: `), message);
    // Listing the classes does not stand for scanning: the key would still be ignored.
    const listed = await scanComponents([fixtures]);
    await rejectsNaming(
      bootstrap({ config, components: listed }),
      ConfigError,
      `${fixtureConfig}:4: app.component-scan`,
    );
    // Scanning another file's directories does not count for this one.
    const other = await loadConfig(fixtureConfig);
    await scanComponents(other);
    await rejectsNaming(bootstrap({ config }), ConfigError, `${fixtureConfig}:4:`);
    // Once scanned, the file is taken, as often as it is given.
    await scanComponents(config);
    await bootstrap({ config, components: listed });
    await bootstrap({ config, components: listed });
  });

  it("refuses a scan whose classes were left out, or whose directories changed since", async () => {
    const config = await loadConfig(fixtureConfig);
    const found = await scanComponents(config);
    assert.ok(found.length > 0);
    // Scanned, but what it found was not given: the key would be as good as ignored.
    await rejectsNaming(
      bootstrap({ config }),
      ConfigError,
      `${fixtureConfig}:4: app.component-scan: scanComponents(config) found ${
        found.map((c) => c.name).join(", ")
      }, which bootstrap was not given`,
    );
    await bootstrap({ config, components: found });
    // What the scan returned, emptied in place afterwards: still what it found.
    const names = found.map((c) => c.name).join(", ");
    found.length = 0;
    await rejectsNaming(
      bootstrap({ config, components: found }),
      ConfigError,
      `scanComponents(config) found ${names}, which bootstrap was not given`,
    );
    // An object whose directories were changed after the scan.
    const object = { app: { "component-scan": ["scan"] } };
    const classes = await scanComponents(object, fileURLToPath(new URL("..", fixtures)));
    object.app["component-scan"].push("other");
    await rejectsNaming(
      bootstrap({ config: object, components: classes }),
      ConfigError,
      'config: app.component-scan: the directories changed after scanComponents(config) scanned them (["scan"], now ["scan","other"])',
    );
  });

  it("substitutes ${VAR} in an object's directories, and takes no base beside a loaded file", async () => {
    const object = { app: { "component-scan": ["${SCAN_DIR:scan}"] } };
    const classes = await scanComponents(object, fileURLToPath(new URL("..", fixtures)));
    assert.deepEqual(
      classes.map((c) => c.name).sort(),
      (await scanComponents([fixtures])).map((c) => c.name).sort(),
    );
    await rejectsNaming(
      scanComponents(await loadConfig(fixtureConfig), "/elsewhere"),
      TypeError,
      "a loaded file's directories resolve against its own folder",
    );
  });

  it("refuses the key in an object, which cannot be scanned relative to a file", async () => {
    await rejectsNaming(
      bootstrap({ config: { app: { "component-scan": ["src"] } } }),
      ConfigError,
      "config: app.component-scan: scanning needs a file system",
      'import { scanComponents } from "@thaw/thaw/scan"',
    );
    // An empty list asks for nothing.
    await bootstrap({ config: { app: { "component-scan": [] } } });
  });
});
