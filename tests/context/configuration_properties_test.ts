import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import {
  Autowired,
  bootstrap,
  ConfigError,
  ConfigurationProperties,
  Service,
  type StandardSchemaV1,
} from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { DefinitionError } from "../../src/context/errors.ts";
import { issueKey } from "../../src/context/configuration_properties.ts";
import { withYaml } from "../config/yaml_file.ts";

const Mail = z.strictObject({
  host: z.string(),
  port: z.coerce.number().int().min(1).default(25),
  relays: z.array(z.strictObject({ host: z.string() })).default([]),
});

@ConfigurationProperties("app.mail", Mail)
class MailSettings {
  host!: string;
  port!: number;
  relays!: { host: string }[];
}

@Service()
class Mailer {
  @Autowired(MailSettings)
  settings!: MailSettings;
}

/** A schema of one's own that answers later, as Standard Schema allows. */
function later<T>(check: (value: unknown) => T | string): StandardSchemaV1<unknown, T> {
  return {
    "~standard": {
      version: 1,
      vendor: "test",
      validate: async (value) => {
        await Promise.resolve();
        const out = check(value);
        return typeof out === "string"
          ? { issues: [{ message: out, path: ["n"] }] }
          : { value: out };
      },
    },
  };
}

describe("@ConfigurationProperties", () => {
  it("makes a bean of the section, validated and converted, injected by its class", async () => {
    const app = await bootstrap({
      components: [MailSettings, Mailer],
      config: { app: { mail: { host: "smtp", port: "${PORT}", relays: [{ host: "r1" }] } } },
      env: { PORT: "2525" },
    });
    const settings = app.getBean(Mailer).settings;
    assert.ok(settings instanceof MailSettings);
    assert.equal(settings.port, 2525);
    assert.deepEqual(settings.relays, [{ host: "r1" }]);
    assert.equal(app.getBean("mailSettings"), settings);
    // Settings do not change behind the beans that read them.
    assert.equal(Object.isFrozen(settings), true);
    assert.throws(() => {
      (settings as { port: number }).port = 1;
    }, TypeError);
  });

  it("takes the schema's defaults for keys left out, and validates a missing section as {}", async () => {
    @ConfigurationProperties("cache", z.object({ size: z.number().default(100) }))
    class CacheSettings {
      size!: number;
    }
    const app = await bootstrap({ components: [CacheSettings], config: {} });
    assert.equal(app.getBean(CacheSettings).size, 100);
  });

  it("stops bootstrap with every issue, each naming the key, the file and the line", async () => {
    await withYaml(
      "app:\n  mail:\n    port: 0\n    relays:\n      - host: a\n      - hots: b\n",
      async (file) => {
        const config = await loadConfig(file, { env: {} });
        await assert.rejects(bootstrap({ components: [MailSettings], config }), (e: unknown) => {
          assert.ok(e instanceof ConfigError, String(e));
          const [head, ...issues] = e.message.split("\n  ");
          assert.equal(
            head,
            '@ConfigurationProperties("app.mail") on class MailSettings: the configuration ' +
              "does not fit the schema:",
          );
          // A missing key is pointed at its parent's line; each issue at its own.
          const expected = [
            `${file}:2: app.mail.host: `,
            `${file}:3: app.mail.port: `,
            `${file}:6: app.mail.relays[1].host: `,
            `${file}:6: app.mail.relays[1]: `,
          ];
          assert.equal(issues.length, expected.length, e.message);
          expected.forEach((start, i) => assert.ok(issues[i].startsWith(start), issues[i]));
          return true;
        });
      },
    );
  });

  it("names the environment variable a refused value came from, and masks secrets", async () => {
    @ConfigurationProperties("db", z.object({ password: z.string().min(40), port: z.number() }))
    class Db {
      password!: string;
      port!: number;
    }
    await assert.rejects(
      bootstrap({
        components: [Db],
        config: { db: { password: "hunter22", port: 1 } },
        env: { DB_PORT: "x" },
      }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.match(e.message, /\n {2}environment variable DB_PORT: db\.port: /);
        assert.doesNotMatch(e.message, /hunter22/);
        return true;
      },
    );
  });

  it("awaits a schema that answers later", async () => {
    @ConfigurationProperties("limits", later((v) => (v as { n?: number }).n ?? "n is missing"))
    class Limits {}
    await assert.rejects(bootstrap({ components: [Limits], config: {} }), {
      message: '@ConfigurationProperties("limits") on class Limits: the configuration does not ' +
        "fit the schema:\n  config: limits.n: n is missing",
    });
  });

  it("refuses a schema whose output is no object, and one that throws", async () => {
    @ConfigurationProperties("a", later(() => 5))
    class Five {}
    await assert.rejects(bootstrap({ components: [Five], config: {} }), DefinitionError);
    @ConfigurationProperties(
      "a",
      later<object>(() => {
        throw new Error("boom");
      }),
    )
    class Throws {}
    await assert.rejects(bootstrap({ components: [Throws], config: {} }), {
      message: '@ConfigurationProperties("a") on class Throws: the schema threw: boom',
    });
  });

  it("refuses a prefix that is no dotted key and a value that is no schema, at once", () => {
    for (const prefix of ["", "a..b", "a b", "${a}", ".a", "a[0]"]) {
      assert.throws(() => ConfigurationProperties(prefix, Mail), TypeError, prefix);
    }
    assert.throws(
      () => ConfigurationProperties("a", {} as StandardSchemaV1),
      /the schema must be a Standard Schema/,
    );
  });

  it("writes an issue's path as the key it points at", () => {
    assert.equal(issueKey("a", ["b", 0, { key: "c" }]), "a.b[0].c");
    assert.equal(issueKey("a", undefined), "a");
  });
});

describe("@ConfigurationProperties: what the configuration cannot do", () => {
  it("replace a method, through a schema that passes unknown keys", async () => {
    @ConfigurationProperties("mail", z.looseObject({ host: z.string() }))
    class Mail {
      host!: string;
      send(): string {
        return `to ${this.host}`;
      }
    }
    await assert.rejects(
      bootstrap({ components: [Mail], config: { mail: { host: "h", send: "boom" } } }),
      {
        name: "ConfigError",
        message: '@ConfigurationProperties("mail") on class Mail: config: mail.send would ' +
          "replace Mail's own send, which is no field: rename the key, or have the schema " +
          "refuse unknown keys",
      },
    );
  });

  it("change a list one bean holds through another bean of the same defaults", async () => {
    const schema = z.object({ relays: z.array(z.string()).default(["a"]) });
    @ConfigurationProperties("one", schema)
    class One {
      relays!: string[];
    }
    @ConfigurationProperties("two", schema)
    class Two {
      relays!: string[];
    }
    const app = await bootstrap({ components: [One, Two], config: {} });
    assert.throws(() => app.getBean(One).relays.push("evil"), TypeError);
    assert.deepEqual(app.getBean(Two).relays, ["a"]);
  });
});

describe("@ConfigurationProperties: round two", () => {
  it("refuses a key that would replace a function field or an accessor", async () => {
    @ConfigurationProperties("h", z.looseObject({}))
    class Handlers {
      onError = (): string => "handled";
      get label(): string {
        return "x";
      }
    }
    for (const key of ["onError", "label"]) {
      await assert.rejects(
        bootstrap({ components: [Handlers], config: { h: { [key]: "oops" } } }),
        new RegExp(`config: h\\.${key} would replace Handlers's own ${key}, which is no field`),
      );
    }
  });

  it("freezes plain data only, a copy of it, and binds a section holding a function", async () => {
    const shared = { retries: 1 };
    const Settings = z.object({
      pattern: z.string().transform((s) => new RegExp(s, "g")),
      policy: z.any().transform(() => shared),
      tags: z.array(z.string()),
      handler: z.any(),
    });
    @ConfigurationProperties("s", Settings)
    class S {
      pattern!: RegExp;
      policy!: { retries: number };
      tags!: string[];
      handler!: unknown;
    }
    const handler = () => "k";
    const app = await bootstrap({
      components: [S],
      config: { s: { pattern: "a", policy: {}, tags: ["x"], handler } },
    });
    const s = app.getBean(S);
    // A global RegExp writes its lastIndex: frozen, it would throw.
    assert.equal("banana".replaceAll(s.pattern, "o"), "bonono");
    assert.equal(s.handler, handler);
    assert.throws(() => s.tags.push("y"), TypeError);
    // The schema's own object is not frozen for whoever else holds it.
    shared.retries = 2;
    assert.equal(Object.isFrozen(shared), false);
  });
});
