import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap, ConfigError } from "../../mod.ts";

async function withYaml(text: string, run: (file: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "thaw-config-"));
  try {
    const file = join(dir, "application.yml");
    await writeFile(file, text);
    await run(file);
  } finally {
    await rm(dir, { recursive: true });
  }
}

describe("application.yml", () => {
  it("substitutes ${VAR} and ${VAR:default}", async () => {
    await withYaml("server:\n  port: ${P}\nname: ${NAME:thaw}-${ENV_X:dev}\n", async (file) => {
      const app = await bootstrap({ config: file, env: { P: "9000", ENV_X: "prod" } });
      assert.deepEqual(app.config, { server: { port: "9000" }, name: "thaw-prod" });
    });
  });

  it("names the variable, the file, the line and the key when a variable is missing", async () => {
    await withYaml("db:\n  user: x\n  password: ${DB_PASSWORD}\n", async (file) => {
      await assert.rejects(bootstrap({ config: file, env: {} }), (e: unknown) => {
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
      await assert.rejects(bootstrap({ config: file }), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.ok(e.message.startsWith(`${file}:3:`), e.message);
        return true;
      });
    });
  });

  it("refuses a document that is not a mapping, and a bad port", async () => {
    await withYaml("- a\n- b\n", async (file) => {
      await assert.rejects(bootstrap({ config: file }), /must be a mapping/);
    });
    await withYaml("server:\n  port: eighty\n", async (file) => {
      await assert.rejects(
        bootstrap({ config: file }),
        /server\.port must be an integer from 0 to 65535, got "eighty"/,
      );
    });
    await assert.rejects(bootstrap({ config: { server: { port: 70000 } } }), /server\.port/);
  });

  it("names a file that cannot be read", async () => {
    await assert.rejects(
      bootstrap({ config: "/no/such/application.yml" }),
      /Cannot read \/no\/such\/application\.yml/,
    );
  });

  it("does not let a __proto__ key reach any prototype", async () => {
    await withYaml(
      "__proto__:\n  polluted: yes\nserver:\n  __proto__:\n    port: 1\n",
      async (file) => {
        const app = await bootstrap({ config: file });
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal(Object.getPrototypeOf(app.config), Object.prototype);
        assert.deepEqual(app.config, { server: {} });
      },
    );
  });
});
