import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { dump } from "js-yaml";
import { ConfigError, loadConfig } from "../../config.ts";
import { z } from "zod";
import { bootstrap, ConfigurationProperties, Service, Value } from "../../mod.ts";
import { listen } from "../../server.ts";
import { isLoadedConfig } from "../../src/config/application_config.ts";
import { propertyOptions } from "../property.ts";
import { configTree, expectedValues, missingPlaceholders } from "./config_trees.ts";
import { withYaml } from "./yaml_file.ts";
import { suiteTempDirs, tempDir } from "../temp_dir.ts";

/** Asserts that `promise` rejects with a ConfigError whose message starts with `start`. */
async function rejectsStarting(promise: Promise<unknown>, start: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof ConfigError, String(e));
    assert.ok(e.message.startsWith(start), `${JSON.stringify(start)} starts: ${e.message}`);
    return true;
  });
}

describe("loadConfig", () => {
  it("reads a path or a file URL, and keeps the file, its directory and each key's line", async () => {
    await withYaml("server:\n  port: 8081\nsearch:\n  - name: main\n", async (file) => {
      for (const path of [file, pathToFileURL(file), relative(process.cwd(), file)]) {
        const config = await loadConfig(path, { env: {} });
        assert.deepEqual(config.values, { server: { port: 8081 }, search: [{ name: "main" }] });
        assert.equal(config.source, file);
        assert.equal(config.dir, dirname(file));
        assert.equal(config.lines?.get("server.port"), 2);
        assert.equal(config.lines?.get("search[0].name"), 4);
        assert.equal(isLoadedConfig(config), true);
      }
    });
  });

  it("returns a frozen configuration, and reads an empty document as no keys", async () => {
    // An empty file, or one left with only comments, is what `touch` or commenting out gives.
    for (
      const text of ["---\n", "~\n", "{}\n", "", "\n", "# server:\n#   port: 8081\n", "\uFEFF"]
    ) {
      await withYaml(text, async (file) => {
        const config = await loadConfig(file);
        assert.deepEqual(config.values, {});
        assert.equal(Object.isFrozen(config), true);
        assert.throws(() => {
          (config as { values: unknown }).values = { a: 1 };
        }, TypeError);
        assert.deepEqual(config.values, {});
      });
    }
  });

  it("freezes the values deeply: apps started from one loaded file cannot change each other's", async () => {
    await withYaml("app:\n  mail:\n    relays: [a, b]\n", async (file) => {
      const config = await loadConfig(file, { env: {} });
      const [one, two] = [await bootstrap({ config }), await bootstrap({ config })];
      const mail = (one.config.app as { mail: { relays: string[] } }).mail;
      assert.throws(() => mail.relays.push("c"), TypeError);
      assert.throws(() => {
        (one.config.app as Record<string, unknown>).extra = 1;
      }, TypeError);
      assert.deepEqual(two.config, { app: { mail: { relays: ["a", "b"] } } });
    });
  });

  it("names the file it cannot read, as an absolute path", async () => {
    await using dir = await tempDir("thaw-load-config-");
    const missing = join(dir.path, "missing.yml");
    await rejectsStarting(loadConfig(missing), `Cannot read ${missing}: `);
    await rejectsStarting(loadConfig(pathToFileURL(missing)), `Cannot read ${missing}: `);
    // A relative path is resolved against the working directory before it is named.
    await rejectsStarting(
      loadConfig(relative(process.cwd(), missing)),
      `Cannot read ${missing}: `,
    );
    await rejectsStarting(
      loadConfig("no-such-dir/application.yml"),
      `Cannot read ${resolve("no-such-dir/application.yml")}: `,
    );
    // A directory is not a file.
    await mkdir(join(dir.path, "folder.yml"));
    await rejectsStarting(loadConfig(join(dir.path, "folder.yml")), `Cannot read ${dir.path}`);
  });

  it("names the file, the line and the column of malformed YAML", async () => {
    await withYaml("app:\n  name: x\n  tags: [a, b\nserver:\n  port: 1\n", async (file) => {
      await assert.rejects(loadConfig(file), (e: unknown) => {
        assert.ok(e instanceof ConfigError, String(e));
        // The unclosed flow sequence is found where the next key starts.
        assert.ok(e.message.startsWith(`${file}:4:1: `), e.message);
        assert.ok(e.cause instanceof Error);
        return true;
      });
    });
    await withYaml("a: 1\na: 2\n", async (file) => {
      await rejectsStarting(loadConfig(file), `${file}:2:`);
    });
  });

  it("refuses a document that is not a mapping, naming the file", async () => {
    for (const text of ["- a\n- b\n", "just text\n", "42\n"]) {
      await withYaml(text, async (file) => {
        await rejectsStarting(loadConfig(file), `${file}: the document must be a mapping of keys`);
      });
    }
  });

  it("refuses a file of several YAML documents, which one configuration cannot be", async () => {
    for (
      const text of ["server:\n  port: 8081\n---\nserver:\n  port: 9090\n", "a: 1\n...\nb: 2\n"]
    ) {
      await withYaml(text, async (file) => {
        await rejectsStarting(loadConfig(file), `${file}: holds 2 YAML documents`);
      });
    }
    // An empty document beside the one that holds the keys is no second configuration.
    for (const text of ["a: 1\n---\n", "a: 1\n---\n# server:\n#   port: 1\n", "---\n---\na: 1\n"]) {
      await withYaml(text, async (file) => {
        assert.deepEqual((await loadConfig(file)).values, { a: 1 });
      });
    }
  });

  it("names the file, the line and the key of a ${VAR} that is unset and has no default", async () => {
    await withYaml(
      "search:\n  - name: main\n    password: ${PW}\n  - name: two\n    password: ${PW:x}\n",
      async (file) => {
        await rejectsStarting(
          loadConfig(file, { env: {} }),
          `${file}:3: search[0].password uses \${PW}, which is not set; set it or write ` +
            `\${PW:default}`,
        );
        const config = await loadConfig(file, { env: { PW: "s3cret" } });
        assert.deepEqual(config.values, {
          search: [{ name: "main", password: "s3cret" }, { name: "two", password: "s3cret" }],
        });
      },
    );
    await withYaml("a:\n  b: [x, '${B}']\n", async (file) => {
      await rejectsStarting(loadConfig(file, { env: {} }), `${file}:2: a.b[1] uses \${B}`);
    });
  });

  it("refuses what is neither a path nor a URL", async () => {
    for (
      const [value, type] of [
        [42, "number"],
        [{ server: { port: 1 } }, "object"],
        [undefined, "undefined"],
        [null, "object"],
        [true, "boolean"],
      ] as const
    ) {
      await rejectsStarting(
        loadConfig(value as never),
        `loadConfig takes a path or a file URL, got ${type}`,
      );
    }
  });
});

describe("loadConfig({ env })", () => {
  it("refuses an option it does not know, and an env that is not an object", async () => {
    await withYaml("a: ${A:x}\n", async (file) => {
      for (
        const [options, message] of [
          [
            { A: "1" },
            'loadConfig(path, options): unknown option "A"; the options are env, profiles',
          ],
          [{ envs: {} }, 'loadConfig(path, options): unknown option "envs"'],
          [{ env: "A=1" }, "loadConfig(path, { env }) takes an object of variables"],
          [{ env: null }, "loadConfig(path, { env }) takes an object of variables"],
          [null, "loadConfig(path, options): the options must be an object, got null"],
        ] as const
      ) {
        await rejectsStarting(loadConfig(file, options as never), message);
      }
    });
  });

  it("reads ${VAR} from the object given, and nothing else", async () => {
    assert.notEqual(process.env.PATH, undefined, "the test needs PATH set");
    await withYaml(
      "path: ${PATH:none}\nctor: ${constructor:none}\nproto: ${__proto__:none}\n" +
        "str: ${toString:none}\nempty: ${EMPTY:fallback}\nraw: <${RAW}>\n",
      async (file) => {
        const config = await loadConfig(file, { env: { EMPTY: "", RAW: "$& $1 ${PATH}" } });
        assert.deepEqual(config.values, {
          // Set in the runtime's environment, but not in the object given.
          path: "none",
          // An object's inherited keys are not variables.
          ctor: "none",
          proto: "none",
          str: "none",
          // Set to the empty string is set.
          empty: "",
          // A value is inserted as it is, not read again.
          raw: "<$& $1 ${PATH}>",
        });
        const unset = await loadConfig(file, { env: { RAW: "r", PATH: undefined } });
        assert.equal(unset.values.path, "none");
      },
    );
  });

  it("reads the runtime's environment when none is given", async () => {
    await withYaml("path: ${PATH}\n", async (file) => {
      assert.deepEqual((await loadConfig(file)).values, { path: process.env.PATH });
    });
  });
});

describe("loadConfig of a YAML dump (property)", () => {
  let dir: string;
  const suiteDir = suiteTempDirs();
  before(async () => {
    dir = await suiteDir("thaw-load-config-");
  });

  it("reads back the values dumped, ${VAR} substituted, or names a missing one at its line", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(configTree, async ({ spec, config, env }) => {
        // Unlimited width: a long string is not folded onto lines of its own.
        const text = dump(config, { lineWidth: -1 });
        const file = join(dir, `application-${run++}.yml`);
        await writeFile(file, text);
        const missing = missingPlaceholders(spec, env);
        if (missing.length === 0) {
          const loaded = await loadConfig(file, { env });
          assert.deepEqual(loaded.values, expectedValues(spec, env), text);
          assert.equal(loaded.source, file);
          assert.equal(loaded.dir, dir);
          assert.equal(isLoadedConfig(loaded), true);
          return;
        }
        await assert.rejects(loadConfig(file, { env }), (e: unknown) => {
          assert.ok(e instanceof ConfigError, String(e));
          const at = e.message.match(/^(.+):(\d+): (.+) uses \$\{([^}]+)\}, which is not set/);
          assert.ok(at, e.message);
          const [, source, line, key, name] = at;
          assert.equal(source, file);
          const found = missing.find((m) => m.key === key && m.name === name);
          assert.ok(found, `${e.message} names none of ${JSON.stringify(missing)}`);
          // The line is where the value is written: the placeholder is on it, or (a string of
          // several lines, written as a block) on one of the lines the string takes from there.
          const lines = text.split("\n");
          const from = Number(line) - 1;
          const taken = lines.slice(from, from + found.text.split("\n").length + 1);
          assert.ok(
            from >= 0 && taken.some((l) => l.includes(`\${${name}`)),
            `line ${line} of\n${text}`,
          );
          return true;
        });
      }),
      propertyOptions(200),
    );
  });
});

/** Runs `run` in a folder holding `files` (name → text). */
async function withFiles(
  files: Record<string, string>,
  run: (dir: string) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir("thaw-profiles-");
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir.path, name)), { recursive: true });
    await writeFile(join(dir.path, name), text);
  }
  await run(dir.path);
}

describe("loadConfig: profiles", () => {
  const files = {
    "application.yml": "server:\n  port: 8080\n  hostname: 0.0.0.0\napp:\n  relays: [a, b, c]\n" +
      "thaw:\n  profiles:\n    active: dev\n",
    "application-dev.yml": "server:\n  port: 8081\n",
    "application-prod.yml": "server:\n  port: 80\napp:\n  relays: [z]\n",
    "application-eu.yml": "\n\nserver:\n  port: 81\n  shutdown-timeout: soon\n",
  };

  it("read each active profile's file over application.yml, in order, merging mappings and replacing lists", async () => {
    await withFiles(files, async (dir) => {
      const file = join(dir, "application.yml");
      const config = await loadConfig(file, { env: {}, profiles: ["prod", "eu"] });
      assert.deepEqual(config.profiles, ["prod", "eu"]);
      assert.deepEqual(config.values, {
        server: { port: 81, hostname: "0.0.0.0", "shutdown-timeout": "soon" },
        app: { relays: ["z"] },
        thaw: { profiles: { active: "dev" } },
      });
      // The error names the profile's file and its line.
      await assert.rejects(bootstrap({ config }), {
        message: `${join(dir, "application-eu.yml")}:5: server.shutdown-timeout must be an ` +
          'integer from 0 to 86400, got "soon"',
      });
    });
  });

  it("take the option, else THAW_PROFILES_ACTIVE, else thaw.profiles.active", async () => {
    await withFiles(files, async (dir) => {
      const file = join(dir, "application.yml");
      const port = async (options: Parameters<typeof loadConfig>[1]) =>
        (await loadConfig(file, options)).values.server;
      assert.deepEqual(await port({ env: {} }), { port: 8081, hostname: "0.0.0.0" });
      assert.deepEqual(await port({ env: { THAW_PROFILES_ACTIVE: "prod" } }), {
        port: 80,
        hostname: "0.0.0.0",
      });
      assert.deepEqual(await port({ env: { THAW_PROFILES_ACTIVE: "prod" }, profiles: "dev" }), {
        port: 8081,
        hostname: "0.0.0.0",
      });
      // Set and empty: no profile, whatever the file says.
      assert.deepEqual(
        (await loadConfig(file, { env: { THAW_PROFILES_ACTIVE: "" } })).profiles,
        [],
      );
    });
  });

  it("read application-default.yml when no profile is active, and only then, as Spring does", async () => {
    const defaults = {
      "application.yml": "server:\n  port: 8080\n  hostname: 0.0.0.0\n",
      "application-default.yml": "server:\n  port: 9000\n  shutdown-timeout: later\n",
      "application-prod.yml": "server:\n  port: 80\n",
    };
    await withFiles(defaults, async (dir) => {
      const file = join(dir, "application.yml");
      for (const env of [{}, { THAW_PROFILES_ACTIVE: "" }]) {
        const config = await loadConfig(file, { env });
        // No profile is active: `default` is the profile Spring falls back to, not an active one.
        assert.deepEqual(config.profiles, []);
        assert.deepEqual(config.values.server, {
          port: 9000,
          hostname: "0.0.0.0",
          "shutdown-timeout": "later",
        });
        // A mistake in it is named with its file and line.
        await assert.rejects(bootstrap({ config }), {
          message: `${join(dir, "application-default.yml")}:3: server.shutdown-timeout must be ` +
            'an integer from 0 to 86400, got "later"',
        });
      }
      // An active profile replaces the default one.
      const prod = await loadConfig(file, { env: {}, profiles: "prod" });
      assert.deepEqual(prod.values.server, { port: 80, hostname: "0.0.0.0" });
    });
    // Optional: without it, no profile and no error.
    await withFiles({ "application.yml": "server:\n  port: 8080\n" }, async (dir) => {
      const config = await loadConfig(join(dir, "application.yml"), { env: {} });
      assert.deepEqual(config.values, { server: { port: 8080 } });
    });
    // It cannot choose profiles either.
    await withFiles({
      "application.yml": "server:\n  port: 8080\n",
      "application-default.yml": "thaw:\n  profiles:\n    active: prod\n",
    }, async (dir) => {
      await assert.rejects(loadConfig(join(dir, "application.yml"), { env: {} }), {
        message: `${join(dir, "application-default.yml")}:3: thaw.profiles.active: the active ` +
          `profiles are chosen in ` +
          `${join(dir, "application.yml")} (or THAW_PROFILES_ACTIVE), not in a profile's own file`,
      });
    });
  });

  it("refuse a profile whose file is missing, naming the file", async () => {
    await withFiles(files, async (dir) => {
      await assert.rejects(
        loadConfig(join(dir, "application.yml"), { env: {}, profiles: "prdo" }),
        {
          name: "ConfigError",
          message: `The profile prdo is active, but ${join(dir, "application-prdo.yml")} does ` +
            "not exist: create it (it may be empty), or leave the profile out",
        },
      );
    });
  });

  it("refuse a profile name that is not a plain name, and thaw.profiles.active in a profile's file", async () => {
    await withFiles({
      ...files,
      "application-x.yml": "thaw:\n  profiles:\n    active: prod\n",
    }, async (dir) => {
      const file = join(dir, "application.yml");
      await assert.rejects(
        loadConfig(file, { env: { THAW_PROFILES_ACTIVE: "../etc/passwd" } }),
        /environment variable THAW_PROFILES_ACTIVE: "..\/etc\/passwd" is not a profile name/,
      );
      await assert.rejects(
        loadConfig(file, { env: {}, profiles: "x" }),
        new RegExp(
          `application-x\\.yml:3: thaw\\.profiles\\.active: the active profiles are chosen`,
        ),
      );
    });
  });

  it("say which profiles are active on the start line", async () => {
    await withFiles(files, async (dir) => {
      const config = await loadConfig(join(dir, "application.yml"), {
        env: {},
        profiles: "prod,dev",
      });
      const lines: string[] = [];
      const app = await bootstrap({
        config,
        logger: { error: () => {}, info: (m: string) => void lines.push(m) },
      });
      const server = await listen(app, { port: 0, hostname: "127.0.0.1", signals: false });
      try {
        assert.match(lines[0], /^Thaw listening on http:\/\/127\.0\.0\.1:\d+ — 0 controllers, /);
        assert.match(lines[0], /, profiles prod, dev$/);
      } finally {
        await server.close();
      }
    });
  });

  it("name the profile's file and line when @Value cannot convert its value", async () => {
    await withFiles({
      "application.yml": "mail:\n  port: 25\n",
      "application-prod.yml": "mail:\n  port: lots\n",
    }, async (dir) => {
      @Service()
      class Mailer {
        @Value("${mail.port}", { type: Number })
        port!: number;
      }
      const config = await loadConfig(join(dir, "application.yml"), {
        env: {},
        profiles: "prod",
      });
      await assert.rejects(bootstrap({ config, components: [Mailer] }), {
        message:
          `@Value on field 'port' of class Mailer: ${join(dir, "application-prod.yml")}:2: ` +
          "mail.port holds a string that is not a number, where a number (or a decimal number " +
          "as text) is needed",
      });
    });
  });
});

describe("loadConfig: ${file:path} secrets", () => {
  it("read a file's text, its trailing line break dropped, relative to the configuration", async () => {
    await withFiles({
      "config/application.yml":
        "db:\n  password: ${file:../secrets/db}\n  user: ${file:/nowhere}\n",
      "secrets/db": "s3cr3t-pw\r\n",
    }, async (dir) => {
      const file = join(dir, "config", "application.yml");
      // A missing file names the key, its line and the path; never a secret.
      await assert.rejects(loadConfig(file, { env: {} }), {
        message: `${file}:3: db.user uses \${file:/nowhere}, which cannot be read: ENOENT`,
      });
      await writeFile(
        file,
        "db:\n  password: ${file:../secrets/db}\n  port: ${file:../secrets/db}x\n",
      );
      const config = await loadConfig(file, { env: {} });
      assert.deepEqual(config.values, { db: { password: "s3cr3t-pw", port: "s3cr3t-pwx" } });
    });
  });

  it("are masked in every error that would quote them", async () => {
    await withFiles({
      "application.yml": "server:\n  hostname: 1\n  port: ${file:pw}\n",
      "pw": "hunter22\n",
    }, async (dir) => {
      const config = await loadConfig(join(dir, "application.yml"), { env: {} });
      await assert.rejects(bootstrap({ config }), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.equal(
          e.message,
          `${join(dir, "application.yml")}:3: server.port must be an integer from 0 to 65535, ` +
            'got "***"',
        );
        return true;
      });
    });
  });

  it("are refused in a configuration object, which reads no file", async () => {
    await assert.rejects(bootstrap({ config: { db: { password: "${file:/run/secrets/db}" } } }), {
      name: "ConfigError",
      message: "config: db.password uses ${file:/run/secrets/db}: a file is read by loadConfig " +
        "of @thaw/thaw/config, not in a configuration object",
    });
  });
});

describe("loadConfig: placeholders inside a default", () => {
  it("refuse one, rather than give a password with a stray }", async () => {
    await withYaml("db:\n  password: ${DB_PW:${file:pw}}\n", async (file) => {
      await assert.rejects(loadConfig(file, { env: {} }), {
        name: "ConfigError",
        message: `${file}:2: db.password: the default of \${DB_PW:...} holds a placeholder; a ` +
          "default is plain text",
      });
    });
  });
});

describe("loadConfig: a value an environment variable set", () => {
  @ConfigurationProperties(
    "mail",
    z.object({ port: z.coerce.number().int(), host: z.string().min(5) }),
  )
  class MailSettings {
    declare readonly port: number;
    declare readonly host: string;
  }

  it("is named with its variable in a schema's error and a setting's, through a placeholder or an override", async () => {
    await withFiles({
      "application.yml": "mail:\n  port: ${MAIL_SMTP_PORT}\n  host: ${SMTP_HOST:smtp.example}\n" +
        "server:\n  port: ${PORT:8080}\n",
      "application-prod.yml": "mail:\n  host: ${REGION}-1\n",
    }, async (dir) => {
      const file = join(dir, "application.yml");
      const refused = async (env: Record<string, string>, profiles: string[] = []) => {
        const config = await loadConfig(file, { env, profiles });
        let message = "";
        await assert.rejects(bootstrap({ config, components: [MailSettings] }), (e: unknown) => {
          message = (e as Error).message;
          return e instanceof ConfigError;
        });
        return message;
      };
      assert.match(
        await refused({ MAIL_SMTP_PORT: "twenty-five" }),
        new RegExp(
          `${escape(file)}:2: mail\\.port \\(from environment variable MAIL_SMTP_PORT\\): ` +
            "Invalid input",
        ),
      );
      // A default taken is the file's own text: no variable to name.
      assert.doesNotMatch(await refused({ MAIL_SMTP_PORT: "x" }), /mail\.host/);
      assert.match(
        await refused({ MAIL_SMTP_PORT: "25", SMTP_HOST: "x" }),
        new RegExp(`${escape(file)}:3: mail\\.host \\(from environment variable SMTP_HOST\\): `),
      );
      // In a profile's file, the variable of that file's placeholder.
      assert.match(
        await refused({ MAIL_SMTP_PORT: "25", REGION: "" }, ["prod"]),
        new RegExp(
          `${escape(join(dir, "application-prod.yml"))}:2: mail\\.host \\(from environment ` +
            "variable REGION\\): ",
        ),
      );
      // An override names itself, and not the placeholder it replaced.
      const overridden = await refused({ MAIL_SMTP_PORT: "25", SMTP_HOST: "x", MAIL_HOST: "y" });
      assert.match(overridden, /environment variable MAIL_HOST: mail\.host: /);
      assert.doesNotMatch(overridden, /SMTP_HOST/);
      // Thaw's own keys alike.
      assert.equal(
        await refused({ MAIL_SMTP_PORT: "25", PORT: "http" }),
        `${file}:5: server.port (from environment variable PORT) must be an integer from 0 to ` +
          '65535, got "http"',
      );
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
