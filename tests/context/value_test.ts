import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Autowired,
  Bean,
  bootstrap,
  Configuration,
  DefinitionError,
  Service,
  Value,
} from "../../mod.ts";
import { loadConfig } from "../../config.ts";
import { ApplicationContext } from "../../src/context/application_context.ts";
import { convertValue, parseValueExpression } from "../../src/context/value.ts";
import { propertyOptions } from "../property.ts";
import { withYaml } from "../config/yaml_file.ts";

/** Asserts that `promise` rejects with a DefinitionError whose message contains every part. */
async function rejectsNaming(promise: Promise<unknown>, ...parts: string[]): Promise<string> {
  let message = "";
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof DefinitionError, String(e));
    for (const part of parts) assert.ok(e.message.includes(part), `${part} in: ${e.message}`);
    message = e.message;
    return true;
  });
  return message;
}

describe("@Value reads the configuration", () => {
  it("takes nested keys as YAML gives them: text, numbers, booleans, lists", async () => {
    await withYaml(
      [
        "mail:",
        "  smtp:",
        "    host: smtp.example.com",
        "    port: 587",
        "    tls: true",
        "  tags: [a, b]",
        "  servers:",
        "    - one",
        "    - two",
      ].join("\n"),
      async (file) => {
        @Service()
        class Mailer {
          @Value("${mail.smtp.host}")
          host!: string;
          @Value("${mail.smtp.port}")
          port!: number;
          @Value("${mail.smtp.tls}")
          tls!: boolean;
          @Value("${mail.tags}")
          tags!: string[];
          @Value("${mail.servers.1}")
          second!: string;
        }
        const config = await loadConfig(file);
        const mailer = (await bootstrap({ components: [Mailer], config })).getBean(Mailer);
        assert.equal(mailer.host, "smtp.example.com");
        assert.equal(mailer.port, 587);
        assert.equal(mailer.tls, true);
        assert.deepEqual(mailer.tags, ["a", "b"]);
        assert.equal(mailer.second, "two");
      },
    );
  });

  it("substitutes ${VAR} inside the YAML value before the field gets it", async () => {
    await withYaml("db:\n  url: postgres://${DB_HOST}:${DB_PORT:5432}/app\n", async (file) => {
      @Service()
      class Db {
        @Value("${db.url}")
        url!: string;
      }
      const config = await loadConfig(file, { env: { DB_HOST: "db1" } });
      const app = await bootstrap({ components: [Db], config });
      assert.equal(app.getBean(Db).url, "postgres://db1:5432/app");
    });
  });

  it("gives each bean its own copy of an object or a list", async () => {
    const config = { app: { limits: { rate: 10, burst: [1, 2] } } };
    @Service()
    class First {
      @Value("${app.limits}")
      limits!: { rate: number; burst: number[] };
    }
    @Service()
    class Second {
      @Value("${app.limits}")
      limits!: { rate: number; burst: number[] };
      @Value("${app.limits.burst}")
      burst!: number[];
    }
    const app = await bootstrap({ components: [First, Second], config });
    const first = app.getBean(First);
    const second = app.getBean(Second);
    assert.deepEqual(first.limits, { rate: 10, burst: [1, 2] });
    first.limits.rate = 99;
    first.limits.burst.push(3);
    second.burst.push(4);
    assert.deepEqual(second.limits, { rate: 10, burst: [1, 2] });
    assert.deepEqual(app.config.app, { limits: { rate: 10, burst: [1, 2] } });
  });

  it("sets the field before the constructor runs, in a parent class and a #private field", async () => {
    @Service()
    class Base {
      @Value("${app.name}")
      name = "initial";
    }
    @Service()
    class Named extends Base {
      @Value("${app.size:3}", { type: Number })
      #size = 0;
      readonly seen: string;
      constructor() {
        super();
        this.seen = `${this.name}/${this.#size}`;
      }
      size(): number {
        return this.#size;
      }
    }
    const app = await bootstrap({ components: [Named], config: { app: { name: "thaw" } } });
    assert.equal(app.getBean(Named).seen, "thaw/3");
    assert.equal(app.getBean(Named).size(), 3);
    // Outside the container the initializers stand.
    assert.equal(new Named().seen, "initial/0");
  });

  it("sets a parent's field in a subclass that has no @Value of its own", async () => {
    class Base {
      @Value("${app.name}")
      name = "initial";
    }
    @Service()
    class Named extends Base {}
    const app = await bootstrap({ components: [Named], config: { app: { name: "thaw" } } });
    assert.equal(app.getBean(Named).name, "thaw");
  });

  it("fills @Configuration classes, whose @Bean methods can use the value", async () => {
    @Configuration()
    class Clients {
      @Value("${api.base:http://localhost:8080}")
      base!: string;
      @Bean()
      apiBase(): URL {
        return new URL(this.base);
      }
    }
    @Service()
    class Caller {
      @Autowired(URL)
      url!: URL;
    }
    const app = await bootstrap({ components: [Clients, Caller] });
    assert.equal(app.getBean(Caller).url.href, "http://localhost:8080/");
  });
});

describe("@Value defaults", () => {
  it("takes everything after the first ':' as the default, as text", async () => {
    @Service()
    class Defaults {
      @Value("${missing.url:http://x:8080/a?b=c}")
      url!: string;
      @Value("${missing.port:8080}")
      port!: string;
      @Value("${missing.empty:}")
      empty!: string;
      @Value("${missing.brace:a}b}")
      brace!: string;
    }
    const defaults = (await bootstrap({ components: [Defaults] })).getBean(Defaults);
    assert.equal(defaults.url, "http://x:8080/a?b=c");
    assert.equal(defaults.port, "8080");
    assert.equal(defaults.empty, "");
    assert.equal(defaults.brace, "a}b");
  });

  it("uses the default for a null key, and the key's value over the default", async () => {
    @Service()
    class Chosen {
      @Value("${a.nothing:fallback}")
      nothing!: string;
      @Value("${a.set:fallback}")
      set!: number;
    }
    const chosen = (await bootstrap({
      components: [Chosen],
      config: { a: { nothing: null, set: 5 } },
    })).getBean(Chosen);
    assert.equal(chosen.nothing, "fallback");
    assert.equal(chosen.set, 5);
  });

  it("a missing or null key without a default names the class, the field and the key", async () => {
    @Service()
    class Needy {
      @Value("${db.password}")
      password!: string;
    }
    await rejectsNaming(
      bootstrap({ components: [Needy] }),
      "class Needy",
      "field 'password'",
      "db.password",
    );
    await rejectsNaming(
      bootstrap({ components: [Needy], config: { db: { password: null } } }),
      "class Needy",
      "field 'password'",
      "db.password",
    );
    // A container made without configuration has no keys at all.
    const context = new ApplicationContext();
    context.register(Needy);
    await rejectsNaming(context.refresh(), "class Needy", "db.password");
  });
});

describe("@Value type conversion", () => {
  it("converts decimal text to a number and true/false to a boolean", async () => {
    @Service()
    class Typed {
      @Value("${s.port}", { type: Number })
      port!: number;
      @Value("${s.ratio}", { type: Number })
      ratio!: number;
      @Value("${s.count}", { type: Number })
      count!: number;
      @Value("${s.on}", { type: Boolean })
      on!: boolean;
      @Value("${s.off}", { type: Boolean })
      off!: boolean;
      @Value("${s.missing:true}", { type: Boolean })
      fallback!: boolean;
      @Value("${s.missing:-2.5}", { type: Number })
      negative!: number;
    }
    const typed = (await bootstrap({
      components: [Typed],
      config: { s: { port: "8081", ratio: " 0.25 ", count: 7, on: "true", off: false } },
    })).getBean(Typed);
    assert.deepEqual(
      [typed.port, typed.ratio, typed.count, typed.on, typed.off, typed.fallback, typed.negative],
      [8081, 0.25, 7, true, false, true, -2.5],
    );
  });

  it("names the class, field, key and kind of value, never the value itself", async () => {
    const cases: [unknown, NumberConstructor | BooleanConstructor, string][] = [
      ["s3cret-token", Number, "a string that is not a number"],
      ["0x10", Number, "a string that is not a number"],
      ["", Number, "a string that is not a number"],
      [["1"], Number, "a list"],
      [{ n: 1 }, Number, "an object"],
      [true, Number, "a boolean"],
      ["1e309", Number, "a string that is not a finite number"],
      [Infinity, Number, "a number that is not finite"],
      [NaN, Number, "a number that is not finite"],
      ["s3cret-yes", Boolean, "a string that is not true or false"],
      [1, Boolean, "a number"],
      [[true], Boolean, "a list"],
    ];
    for (const [value, type, kind] of cases) {
      @Service()
      class Strict {
        @Value("${app.setting}", { type })
        setting!: unknown;
      }
      const message = await rejectsNaming(
        bootstrap({ components: [Strict], config: { app: { setting: value } } }),
        "class Strict",
        "field 'setting'",
        "app.setting",
        kind,
      );
      assert.ok(!message.includes("s3cret"), message);
    }
  });

  it("converts any number written as text back to that number (property)", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const converted = convertValue(String(n), Number);
        assert.ok(converted.ok);
        assert.equal(converted.value, n === 0 ? 0 : n);
        assert.deepEqual(convertValue(n, Number), { ok: true, value: n });
      }),
      propertyOptions(500),
    );
  });

  it("refuses text holding a character no decimal number has (property)", () => {
    fc.assert(
      fc.property(
        fc.string(),
        // None of these is in a decimal number, nor in "true" or "false".
        fc.constantFrom(..."bcdgxyzBCDGXYZ_$"),
        fc.string(),
        (before, letter, after) => {
          const converted = convertValue(`${before}${letter}${after}`, Number);
          assert.equal(converted.ok, false);
          assert.equal(convertValue(`${before}${letter}${after}`, Boolean).ok, false);
        },
      ),
      propertyOptions(500),
    );
  });
});

describe("@Value expressions", () => {
  const segment = fc.stringMatching(/^[A-Za-z0-9_\-[\]]{1,8}$/);
  const key = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join("."));

  it("takes ${key} and ${key:default} apart, the default running to the last '}' (property)", () => {
    fc.assert(
      fc.property(key, fc.option(fc.string(), { nil: undefined }), (k, fallback) => {
        const expression = fallback === undefined ? `\${${k}}` : `\${${k}:${fallback}}`;
        assert.deepEqual(
          parseValueExpression(expression),
          fallback === undefined ? { key: k } : { key: k, fallback },
        );
      }),
      propertyOptions(500),
    );
  });

  it("refuses anything else at decoration, naming the expression", () => {
    const malformed = [
      "server.port",
      "${}",
      "${:8080}",
      "${server.port",
      "$server.port}",
      "$ {a}",
      "{a}",
      "${a}b",
      "x${a}",
      "${a}:b}",
      "${a..b}",
      "${.a}",
      "${a.}",
      "${a b}",
      "${a}${b}",
    ];
    for (const expression of malformed) {
      assert.throws(
        () => Value(expression),
        (e: unknown) =>
          e instanceof TypeError && e.message.includes(JSON.stringify(expression)) &&
          /\$\{key\} or \$\{key:default\}/.test(e.message),
        expression,
      );
    }
    assert.throws(() => Value(42 as unknown as string), /@Value\(42\)/);
  });

  it("refuses a type other than Number or Boolean, and a default the type cannot take", () => {
    assert.throws(
      () => Value("${a}", { type: String as unknown as NumberConstructor }),
      /@Value\("\$\{a\}"\): type must be Number or Boolean/,
    );
    assert.throws(
      () => Value("${port:eighty}", { type: Number }),
      /@Value\("\$\{port:eighty\}", \{ type: Number \}\): the default is a string that is not a number/,
    );
    assert.throws(
      () => Value("${debug:yes}", { type: Boolean }),
      /the default is a string that is not true or false/,
    );
  });

  it("decorates instance fields only", () => {
    assert.throws(() => {
      class Holder {
        @Value("${a}")
        static shared: string;
      }
      return Holder;
    }, /@Value\("\$\{a\}"\) on shared: it decorates instance fields only/);
  });
});
