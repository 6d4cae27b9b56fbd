import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { bootstrap, ConfigError, PostConstruct, Service } from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import {
  configSecrets,
  isLoadedConfig,
  isSecretKey,
  resolveConfig,
} from "../../src/config/application_config.ts";
import { propertyOptions } from "../property.ts";
import { configTree, envOf, expectedValues, missingPlaceholders, render } from "./config_trees.ts";
import { withYaml } from "./yaml_file.ts";

describe("application.yml", () => {
  it("substitutes ${VAR} and ${VAR:default}", async () => {
    await withYaml("server:\n  port: ${P}\nname: ${NAME:thaw}-${ENV_X:dev}\n", async (file) => {
      const config = await loadConfig(file, { env: { P: "9000", ENV_X: "prod" } });
      const app = await bootstrap({ config });
      assert.deepEqual(app.config, { server: { port: "9000" }, name: "thaw-prod" });
    });
  });

  it("names the variable, the file, the line and the key when a variable is missing", async () => {
    await withYaml("db:\n  user: x\n  password: ${DB_PASSWORD}\n", async (file) => {
      await assert.rejects(loadConfig(file, { env: {} }), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.ok(
          e.message.startsWith(
            `${file}:3: db.password uses \${DB_PASSWORD}, which is not set`,
          ),
          e.message,
        );
        return true;
      });
    });
    // Given as an object there is no file, hence no line.
    await assert.rejects(
      bootstrap({ config: { db: { password: "${DB_PASSWORD}" } }, env: {} }),
      (e: Error) => e.message.startsWith("config: db.password uses ${DB_PASSWORD}, which is not"),
    );
  });

  it("names the file, line and column of a YAML syntax error", async () => {
    await withYaml("server:\n  port: 1\n bad: [\n", async (file) => {
      await assert.rejects(loadConfig(file), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.ok(e.message.startsWith(`${file}:3:`), e.message);
        return true;
      });
    });
  });

  it("refuses a document that is not a mapping, and a bad port", async () => {
    await withYaml("- a\n- b\n", async (file) => {
      await assert.rejects(loadConfig(file), /must be a mapping/);
    });
    await withYaml("server:\n  port: eighty\n", async (file) => {
      await assert.rejects(
        bootstrap({ config: await loadConfig(file) }),
        /server\.port must be an integer from 0 to 65535, got "eighty"/,
      );
    });
    await assert.rejects(bootstrap({ config: { server: { port: 70000 } } }), /server\.port/);
  });

  it("names a file that cannot be read", async () => {
    await assert.rejects(
      loadConfig("/no/such/application.yml"),
      /Cannot read \/no\/such\/application\.yml/,
    );
  });

  it("does not let a __proto__ key reach any prototype", async () => {
    await withYaml(
      "__proto__:\n  polluted: yes\nserver:\n  __proto__:\n    port: 1\n",
      async (file) => {
        const app = await bootstrap({ config: await loadConfig(file) });
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal(Object.getPrototypeOf(app.config), Object.prototype);
        assert.deepEqual(app.config, { server: {} });
      },
    );
  });
});

describe("bootstrap({ config })", () => {
  /** Asserts that `promise` rejects with a ConfigError whose message contains every part. */
  async function rejectsNaming(promise: Promise<unknown>, ...parts: string[]): Promise<void> {
    await assert.rejects(promise, (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      for (const part of parts) assert.ok(e.message.includes(part), `${part} in: ${e.message}`);
      return true;
    });
  }

  it("refuses a path, pointing at loadConfig of @thaw/thaw/config", async () => {
    await rejectsNaming(
      bootstrap({ config: "application.yml" as never }),
      'bootstrap({ config: "application.yml" })',
      'import { loadConfig } from "@thaw/thaw/config"',
      'config: await loadConfig("application.yml")',
    );
  });

  it("refuses a file URL, pointing at loadConfig of @thaw/thaw/config", async () => {
    const url = new URL("file:///srv/app/application.yml");
    await rejectsNaming(
      bootstrap({ config: url as never }),
      'bootstrap({ config: new URL("file:///srv/app/application.yml") })',
      'import { loadConfig } from "@thaw/thaw/config"',
      'config: await loadConfig(new URL("file:///srv/app/application.yml"))',
    );
  });

  it("the fix it suggests for a file URL works, and loadConfig reads a file: URL given as text", async () => {
    await withYaml("a: 1\n", async (file) => {
      const url = pathToFileURL(file);
      for (const given of [url, url.href]) {
        assert.deepEqual((await bootstrap({ config: await loadConfig(given) })).config, { a: 1 });
      }
    });
  });

  it("refuses what is neither an object of keys nor a loaded file", async () => {
    await rejectsNaming(bootstrap({ config: ["a"] as never }), "got an array");
    await rejectsNaming(bootstrap({ config: 8080 as never }), "got number");
    await rejectsNaming(bootstrap({ config: true as never }), "got boolean");
    await rejectsNaming(
      bootstrap({ config: null as never }),
      "bootstrap({ config }) takes an object of keys or what loadConfig returns",
    );
  });

  it("refuses a copy of a loaded file, which would be read as the keys values, source, ...", async () => {
    await withYaml("a: 1\n", async (file) => {
      const loaded = await loadConfig(file);
      assert.equal(isLoadedConfig(loaded), true);
      const copies = [
        { ...loaded },
        { ...loaded, values: { ...loaded.values, b: 2 } },
        structuredClone(loaded),
        { values: loaded.values, source: loaded.source, dir: loaded.dir },
      ];
      for (const copy of copies) {
        assert.equal(isLoadedConfig(copy), false);
        await rejectsNaming(
          bootstrap({ config: copy }),
          `bootstrap({ config }) got a copy of what loadConfig returned (${file})`,
          "config: { ...loaded.values, ... }",
        );
      }
      // What the message says to do instead.
      const app = await bootstrap({ config: { ...loaded.values, b: 2 } });
      assert.deepEqual(app.config, { a: 1, b: 2 });
      assert.deepEqual((await bootstrap({ config: loaded })).config, { a: 1 });
    });
    // Keys of an app that happen to be called so, beside others, are keys.
    const shaped = { values: { a: "${A}" }, source: "x.yml", other: 1 };
    const app = await bootstrap({ config: shaped, env: { A: "1" } });
    assert.deepEqual(app.config, { values: { a: "1" }, source: "x.yml", other: 1 });
  });

  it("recognises a file loaded by another copy of the package by its registered mark", async () => {
    await withYaml("server:\n  port: 7\n", async (file) => {
      const loaded = await loadConfig(file);
      // As another copy's loadConfig leaves it: the mark, and nothing of this copy's.
      const foreign = Object.defineProperty(
        { values: loaded.values, source: loaded.source, dir: loaded.dir },
        Symbol.for("@thaw/thaw.loadedConfig"),
        { value: true },
      );
      assert.equal(isLoadedConfig(foreign), true);
      assert.deepEqual((await bootstrap({ config: foreign })).config, { server: { port: 7 } });
    });
  });

  it("freezes a configuration object's values, as a loaded file's", async () => {
    const given = { app: { relays: ["a"] } };
    const app = await bootstrap({ config: given });
    assert.throws(() => (app.config.app as { relays: string[] }).relays.push("b"), TypeError);
    // The caller's own object is not frozen: the app has a copy.
    given.app.relays.push("b");
    assert.deepEqual(app.config, { app: { relays: ["a"] } });
  });

  it("applies its env option to an object, and refuses it beside a file loadConfig read", async () => {
    await withYaml("name: ${NAME:file}\n", async (file) => {
      const config = await loadConfig(file, { env: { NAME: "loaded" } });
      // The file's placeholders are already substituted: an env here would change nothing.
      await assert.rejects(
        bootstrap({ config, env: { NAME: "bootstrap" } }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.includes(`${file} was read by loadConfig`) &&
          error.message.includes("loadConfig(path, { env })"),
      );
      assert.deepEqual((await bootstrap({ config })).config, { name: "loaded" });
    });
    const app = await bootstrap({ config: { name: "${NAME:object}" }, env: { NAME: "given" } });
    assert.deepEqual(app.config, { name: "given" });
    // The option stands for the whole environment: a variable it leaves out is unset.
    const unset = await bootstrap({ config: { p: "${PATH:none}" }, env: {} });
    assert.deepEqual(unset.config, { p: "none" });
  });
});

describe("resolveConfig (property)", () => {
  it("substitutes every ${VAR} of an object as the environment has it, or names one unset", () => {
    fc.assert(
      fc.property(configTree, (tree) => {
        const env = envOf(tree.env);
        const missing = missingPlaceholders(tree.spec, tree.env);
        if (missing.length === 0) {
          // The variables each value took are traced for messages (loadConfig's own tests).
          const full = resolveConfig(tree.config, env);
          const { variables: _traced, ...resolved } = full;
          assert.deepEqual(resolved, {
            values: expectedValues(tree.spec, tree.env),
            source: "config",
            dir: undefined,
          });
          assert.equal(isLoadedConfig(full), false);
          // The object given is left as it was.
          assert.deepEqual(tree.config, render(tree.spec));
        } else {
          assert.throws(
            () => resolveConfig(tree.config, env),
            (e: unknown) => {
              assert.ok(e instanceof ConfigError, String(e));
              const named = e.message.match(/^config: (.+) uses \$\{([^}]+)\}, which is not set/);
              assert.ok(named, e.message);
              assert.ok(
                missing.some((m) => m.key === named[1] && m.name === named[2]),
                `${e.message} names none of ${JSON.stringify(missing)}`,
              );
              return true;
            },
          );
        }
      }),
      propertyOptions(300),
    );
  });

  it("returns what loadConfig read as it is", async () => {
    await withYaml("a: ${A:1}\n", async (file) => {
      const loaded = await loadConfig(file, { env: {} });
      assert.equal(resolveConfig(loaded, () => "2"), loaded);
      assert.deepEqual(resolveConfig(undefined), { values: {}, source: "config", dir: undefined });
    });
  });

  it("reads a variable its env lookup throws for as unset, for the overrides", () => {
    const env = (name: string): string | undefined => {
      if (name === "SERVER_PORT") throw new Error("not allowed");
      return name === "SERVER_HOSTNAME" ? "0.0.0.0" : undefined;
    };
    const { values } = resolveConfig({ server: { port: 8080, hostname: "localhost" } }, env);
    assert.deepEqual(values, { server: { port: 8080, hostname: "0.0.0.0" } });
  });
});

describe("bootstrap: secrets in errors", () => {
  it("masks the value of a key named like a secret in the message and the stack", async () => {
    await assert.rejects(
      bootstrap({
        config: { server: { hostname: 1, port: "hunter22" }, db: { password: "hunter22" } },
      }),
      (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.equal(
          e.message,
          'config: server.port must be an integer from 0 to 65535, got "***"',
        );
        assert.doesNotMatch(String(e.stack), /hunter22/);
        return true;
      },
    );
  });

  it("leaves flags and numbers under secret-like names alone", async () => {
    await assert.rejects(
      bootstrap({
        config: { server: { port: "true" }, auth: { enabled: "true", "token-ttl": 3600 } },
      }),
      { message: 'config: server.port must be an integer from 0 to 65535, got "true"' },
    );
  });
});

describe("bootstrap: secrets in errors, round 2", () => {
  it("masks the causes an error carries, down the chain", async () => {
    @Service()
    class Client {
      @PostConstruct()
      open(): void {
        throw new Error("cannot reach http://x (password hunter2-very-secret)");
      }
    }
    await assert.rejects(
      bootstrap({ components: [Client], config: { db: { password: "hunter2-very-secret" } } }),
      (e: unknown) => {
        assert.ok(e instanceof Error && e.cause instanceof Error);
        for (const text of [e.message, e.stack, e.cause.message, e.cause.stack]) {
          assert.doesNotMatch(String(text), /hunter2/);
        }
        return true;
      },
    );
  });

  it("masks values by whole words of the key's name, not within other words", async () => {
    const app = { author: "server", oauthEnabled: "yes-please" };
    await assert.rejects(bootstrap({ config: { app, server: { port: "yes-please" } }, env: {} }), {
      message: 'config: server.port must be an integer from 0 to 65535, got "yes-please"',
    });
    for (const secret of [{ "api-key": "k3y" }, { accessToken: "k3y" }, { dbPassword: "k3y" }]) {
      await assert.rejects(
        bootstrap({ config: { app: { ...app, ...secret }, server: { port: "k3y" } }, env: {} }),
        { message: 'config: server.port must be an integer from 0 to 65535, got "***"' },
        JSON.stringify(secret),
      );
    }
  });
});

describe("bootstrap: secrets in errors, round 3", () => {
  const config = { db: { password: 'C:\\vault"pw42', smtppass: "smtp-value", pw: "pw-value" } };
  const secrets = [/vault/, /smtp-value/, /pw-value/];

  it("masks what an error carries that is no error, AggregateError's errors and own texts", async () => {
    const thrown: unknown[] = [
      "login failed for pw-value",
      { detail: "password=smtp-value" },
      new AggregateError([new Error("auth failed for smtp-value"), "pw-value"], "several"),
      Object.assign(new Error("bad"), { detail: 'server said {"password":"C:\\\\vault\\"pw42"}' }),
    ];
    for (const value of thrown) {
      @Service()
      class Client {
        @PostConstruct()
        open(): void {
          throw value;
        }
      }
      await assert.rejects(bootstrap({ components: [Client], config }), (e: unknown) => {
        const seen: string[] = [];
        const walk = (x: unknown, depth: number): void => {
          if (depth > 4 || x === null || x === undefined) return;
          if (typeof x === "string") return void seen.push(x);
          if (typeof x !== "object") return;
          for (const key of Object.getOwnPropertyNames(x)) {
            walk((x as Record<string, unknown>)[key], depth + 1);
          }
        };
        walk(e, 0);
        for (const secret of secrets) {
          assert.ok(!seen.some((text) => secret.test(text)), `${secret} in ${seen.join(" | ")}`);
        }
        return true;
      });
    }
  });

  it("masks a JSON-escaped secret, and keys that hold a secret word", async () => {
    @Service()
    class Client {
      @PostConstruct()
      open(): void {
        throw new Error(`server said ${JSON.stringify({ password: 'C:\\vault"pw42' })}`);
      }
    }
    await assert.rejects(bootstrap({ components: [Client], config }), (e: unknown) => {
      assert.ok(e instanceof Error);
      assert.doesNotMatch(`${e.message} ${(e.cause as Error).message}`, /vault/);
      return true;
    });
    for (const key of ["dbpass", "accesstoken", "smtppass", "passcode", "pw", "signing-key"]) {
      await assert.rejects(
        bootstrap({ config: { app: { [key]: "s3cr3t-v" }, server: { port: "s3cr3t-v" } } }),
        { message: 'config: server.port must be an integer from 0 to 65535, got "***"' },
        key,
      );
    }
  });
});

describe("isSecretKey", () => {
  it("takes Spring's secret names, and what else names a credential, in any key style", () => {
    const secret = [
      "app.db.password",
      "client-secret",
      "accessToken",
      "app.signature",
      "webhook.signing-signature",
      "jwt",
      "app.jwt-value",
      "bearer",
      "app.bearerValue",
      "app.credential",
      "cloud.aws.credentials",
      "private-key",
      "privatekey",
      "privateKey",
      "api-key",
      "apikey",
      "API_KEY",
      "key",
      "VCAP_SERVICES",
      "vcap.services",
    ];
    for (const key of secret) assert.equal(isSecretKey(key), true, key);
    for (const key of ["author", "oauth-enabled", "server.port", "app.keyboard", "app.monkey"]) {
      assert.equal(isSecretKey(key), false, key);
    }
  });
});

describe("configSecrets", () => {
  it("does not count the resource server's jwt settings as secrets: its audiences and claim names are shown", () => {
    const config = resolveConfig({
      security: {
        oauth2: {
          resourceserver: {
            jwt: {
              "issuer-uri": "https://login.example.com",
              audiences: ["users"],
              "roles-claim-name": "roles",
              "principal-claim-name": "email",
            },
          },
        },
      },
      app: { jwt: "eyJhbGciOiJFUzI1NiJ9.e30.c2lnbmF0dXJl" },
    }, () => undefined);
    assert.deepEqual(configSecrets(config), ["eyJhbGciOiJFUzI1NiJ9.e30.c2lnbmF0dXJl"]);
  });

  it("shows the introspection endpoint and client id, and counts the client secret", () => {
    const config = resolveConfig({
      security: {
        oauth2: {
          resourceserver: {
            opaquetoken: {
              "introspection-uri": "https://login.example.com/oauth2/introspect",
              "client-id": "orders-api",
              "client-secret": "s3cret-of-orders",
            },
          },
        },
      },
    }, () => undefined);
    assert.deepEqual(configSecrets(config), ["s3cret-of-orders"]);
  });
});
