import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../../../src/config/config_error.ts";
import { loadSearchConnections } from "../../../src/migrate/search/search_config.ts";
import { tempDir } from "../../temp_dir.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

async function load(files: Record<string, string>, vars: Record<string, string> = {}) {
  await using dir = await tempDir("thaw-config-");
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir.path, name), text);
  return { dir: dir.path, connections: await loadSearchConnections(dir.path, env(vars)) };
}

async function fails(files: Record<string, string>, pattern: RegExp, vars = {}) {
  await assert.rejects(load(files, vars), (e: unknown) => {
    assert.ok(e instanceof ConfigError, String(e));
    assert.match(e.message, pattern);
    return true;
  });
}

describe("search connections config", () => {
  it("reads the search key of application.yml with defaults and ${VAR} substitution", async () => {
    const { connections } = await load({
      "application.yml": 'server:\n  port: 1\nsearch:\n  - name: main\n    hosts: ["${HOST}"]\n' +
        "    username: u\n    password: ${PASS}\n    migrations:\n      enabled: true\n",
    }, { HOST: "http://127.0.0.1:9200", PASS: "s3cret" });
    assert.equal(connections.length, 1);
    const c = connections[0];
    assert.equal(c.name, "main");
    assert.equal(c.hosts[0].href, "http://127.0.0.1:9200/");
    assert.equal(c.password, "s3cret");
    assert.equal(c.timeoutMs, 10_000);
    assert.equal(c.connectTimeoutMs, 5_000);
    assert.equal(c.sslVerification, true);
    assert.equal(c.proxy, undefined);
    assert.equal(c.migrationsEnabled, true);
    assert.equal(c.recordsIndex, "framework_migrations");
  });

  it("prefers search-config.yml, accepts the opensearch aliases, and reads every setting", async () => {
    const { connections } = await load({
      "application.yml": "search:\n  - name: ignored\n    hosts: [http://x]\n",
      "opensearch-config.yml": "opensearch:\n  - name: logs\n    hosts: https://a:9200\n" +
        "    ssl_verification: false\n    timeout: 2.5\n    connect_timeout: 0\n    proxy: http://proxy:3128\n" +
        '    migrations: { enabled: "true", index: my_migrations }\n  - name: off\n    hosts: [http://b]\n    proxy: false\n',
    });
    assert.deepEqual(connections.map((c) => c.name), ["logs", "off"]);
    const [logs, off] = connections;
    assert.equal(logs.sslVerification, false);
    assert.equal(logs.timeoutMs, 2500);
    assert.equal(logs.connectTimeoutMs, 5000, "values <= 0 fall back to the default");
    assert.equal((logs.proxy as URL).href, "http://proxy:3128/");
    assert.equal(logs.recordsIndex, "my_migrations");
    assert.equal(off.proxy, false);
    assert.equal(off.migrationsEnabled, false);
  });

  it("names the file, the line and the key of a missing or wrong setting", async () => {
    await fails(
      { "application.yml": "search:\n  - name: main\n    username: u\n" },
      /application\.yml:2: search\[0\]\.hosts is missing/,
    );
    await fails({
      "application.yml":
        "search:\n  - name: main\n    hosts:\n      - http://ok\n      - not a url\n",
    }, /application\.yml:5: search\[0\]\.hosts\[1\] must be an http/);
    await fails(
      { "application.yml": "search:\n  - name: main\n    hosts: [ftp://x]\n" },
      /:3: search\[0\]\.hosts\[0\]/,
    );
    await fails({
      "application.yml": "search:\n  - name: main\n    hosts: [http://x]\n    timeout: soon\n",
    }, /:4: search\[0\]\.timeout must be a number/);
    await fails({
      "application.yml":
        "search:\n  - name: main\n    hosts: [http://x]\n    ssl_verification: maybe\n",
    }, /:4: search\[0\]\.ssl_verification must be true or false/);
    await fails({
      "application.yml": "search:\n  - name: main\n    hosts: [http://x]\n    hostz: 1\n",
    }, /:4: search\[0\]\.hostz is not a connection setting/);
    await fails({
      "application.yml":
        "search:\n  - name: a\n    hosts: [http://x]\n    migrations:\n      flyway_compatible: yes\n",
    }, /:5: search\[0\]\.migrations\.flyway_compatible must be true or false, got "yes"/);
    await fails(
      { "application.yml": "search:\n  - name: ../etc\n    hosts: [http://x]\n" },
      /:2: search\[0\]\.name must be a folder name/,
    );
    await fails({
      "application.yml":
        "search:\n  - name: a\n    hosts: [http://x]\n  - name: a\n    hosts: [http://y]\n",
    }, /:4: search\[1\]\.name: "a" is used twice/);
    await fails({ "application.yml": "search: main\n" }, /:1: search must be a list/);
    await fails({
      "application.yml":
        "search:\n  - name: a\n    hosts: [http://x]\n    migrations: {index: Bad}\n",
    }, /migrations\.index must be a lowercase index name/);
  });

  it("names the line and column of a YAML syntax error", async () => {
    await fails(
      { "application.yml": "search:\n  - name: main\n   hosts: [\n" },
      /application\.yml:3:\d+: /,
    );
  });

  it("says to quote a ${VAR} written bare inside [ ] or { }, where YAML reads { as a mapping", async () => {
    await fails(
      { "application.yml": "search:\n  - name: main\n    hosts: [${URL}]\n" },
      /application\.yml:3:\d+: .*; a \$\{VAR\} inside \[ \] or \{ \} must be quoted: \["\$\{URL\}"\]/,
    );
    // Quoted, it is read.
    const { connections } = await load(
      { "application.yml": 'search:\n  - name: main\n    hosts: ["${URL}"]\n' },
      { URL: "http://127.0.0.1:9200" },
    );
    assert.equal(connections[0].hosts[0].href, "http://127.0.0.1:9200/");
  });

  it("refuses search: and opensearch: in one file, naming the line of the second", async () => {
    await fails(
      {
        "application.yml": "search:\n  - name: main\n    hosts: http://a:9200\n" +
          "opensearch:\n  - name: logs\n    hosts: http://b:9200\n",
      },
      /application\.yml:4: opensearch: is another name for search:, which is set too \(line 1\); keep one/,
    );
    // Written as one flow mapping, both are on its line.
    await fails(
      { "application.yml": '{search: [{name: a, hosts: "http://a:9200"}], opensearch: []}\n' },
      /application\.yml:1: opensearch: is another name for search:, which is set too \(line 1\)/,
    );
  });

  it("never shows credentials given in a host URL", async () => {
    await assert.rejects(
      load({
        "application.yml":
          'search:\n  - name: a\n    hosts: ["http://admin:hunter2@x"]\n    password: hunter2\n',
      }),
      (e: Error) =>
        !e.message.includes("hunter2") && /credentials in username and password/.test(e.message),
    );
    await assert.rejects(
      load({ "application.yml": 'search:\n  - name: a\n    hosts: ["ftp://admin:hunter2@x"]\n' }),
      (e: Error) => !e.message.includes("hunter2") && /\*\*\*@x/.test(e.message),
    );
  });

  it("says which variable is missing, and which files it looked at", async () => {
    await fails(
      { "application.yml": 'search:\n  - name: a\n    hosts: ["${NOPE}"]\n' },
      /application\.yml:3: search\[0\]\.hosts\[0\] uses \$\{NOPE\}, which is not set/,
    );
    await fails(
      {
        "search-config.yml":
          "search:\n  - name: a\n    hosts: [http://x]\n\n    password: >-\n      ${PW}\n",
      },
      /search-config\.yml:5: search\[0\]\.password uses \$\{PW\}, which is not set/,
    );
    await fails(
      { "application.yml": "server: {}\n" },
      /none of .*application\.yml has a "search" key/,
    );
    await fails({}, /No configuration in/);
  });

  it("reads migrations.placeholders: strings as they are, numbers and booleans as text", async () => {
    const { connections } = await load({
      "application.yml": "search:\n  - name: a\n    hosts: [http://x]\n    migrations:\n" +
        "      placeholders:\n        prefix: dev_\n        shards: 2\n        ratio: '1.50'\n" +
        '        flag: true\n        empty: ""\n        "dotted.name-1": x\n' +
        "  - name: b\n    hosts: [http://y]\n",
    });
    assert.deepEqual([...connections[0].placeholders!], [
      ["prefix", "dev_"],
      ["shards", "2"],
      ["ratio", "1.50"],
      ["flag", "true"],
      ["empty", ""],
      ["dotted.name-1", "x"],
    ]);
    assert.equal(connections[1].placeholders, undefined, "none unless configured");
    const empty = await load({
      "application.yml":
        "search:\n  - name: a\n    hosts: [http://x]\n    migrations:\n      placeholders: {}\n",
    });
    assert.equal(empty.connections[0].placeholders, undefined, "an empty mapping is none");
  });

  it("substitutes ${VAR:default} in placeholder values, and names the line of an unset one", async () => {
    const yaml = "search:\n  - name: a\n    hosts: [http://x]\n    migrations:\n" +
      "      placeholders:\n        prefix: ${INDEX_PREFIX:dev_}\n        env: ${ENV}-x\n";
    const set = await load({ "application.yml": yaml }, { INDEX_PREFIX: "prod_", ENV: "prod" });
    assert.deepEqual([...set.connections[0].placeholders!], [["prefix", "prod_"], [
      "env",
      "prod-x",
    ]]);
    const fallback = await load({ "application.yml": yaml }, { ENV: "test" });
    assert.equal(fallback.connections[0].placeholders?.get("prefix"), "dev_");
    await fails(
      { "application.yml": yaml },
      /application\.yml:7: search\[0\]\.migrations\.placeholders\.env uses \$\{ENV\}, which is not set/,
    );
  });

  it("refuses a number whose text YAML would not keep: write it in quotes", async () => {
    for (const value of ["1.10", "123456789012345678", "0.5", "-9007199254740993"]) {
      await assert.rejects(
        load({
          "application.yml": "search:\n  - name: a\n    hosts: [http://x]\n    migrations:\n" +
            `      placeholders:\n        v: ${value}\n`,
        }),
        /application\.yml:6: search\[0\]\.migrations\.placeholders\.v is a number YAML may not keep as written \(only whole numbers up to 2\^53 are\): write it in quotes/,
        value,
      );
    }
  });

  it("refuses a placeholders setting that is not a mapping of names to plain values", async () => {
    const at = (placeholders: string) =>
      "search:\n  - name: a\n    hosts: [http://x]\n    migrations:\n      placeholders:" +
      placeholders;
    await fails(
      { "application.yml": at(" [a, b]\n") },
      /application\.yml:5: search\[0\]\.migrations\.placeholders must be a mapping of name: value/,
    );
    await fails(
      { "application.yml": at(" prefix\n") },
      /:5: search\[0\]\.migrations\.placeholders must be a mapping/,
    );
    for (const name of ["1x", "a b", "-x", ".x", "x:y", "é"]) {
      await fails(
        { "application.yml": at(`\n        ok: 1\n        "${name}": v\n`) },
        /application\.yml:7: search\[0\]\.migrations\.placeholders\..* is not a placeholder name/,
      );
    }
    await fails(
      { "application.yml": at("\n        prefix:\n          nested: https://u:Hid-nested@h\n") },
      /^(?![\s\S]*Hid-nested)[\s\S]*application\.yml:6: search\[0\]\.migrations\.placeholders\.prefix must be a string, a number or true\/false, got a mapping/,
    );
    await fails(
      { "application.yml": at("\n        prefix: [a]\n") },
      /:6: search\[0\]\.migrations\.placeholders\.prefix must be .*, got a list/,
    );
    await fails(
      { "application.yml": at("\n        prefix:\n") },
      /:6: search\[0\]\.migrations\.placeholders\.prefix must be .*, got nothing \(write "" for an empty value\)/,
    );
    await fails(
      { "application.yml": at("\n        prefix: .nan\n") },
      /:6: search\[0\]\.migrations\.placeholders\.prefix must be .*, got a number that is not finite/,
    );
  });

  it("drops a __proto__ key instead of treating it as a prototype or a setting", async () => {
    const { connections } = await load({
      "application.yml":
        "search:\n  - name: a\n    hosts: [http://x]\n    __proto__: {timeout: 1}\n",
    });
    assert.equal(connections[0].timeoutMs, 10_000);
    assert.equal(({} as Record<string, unknown>).timeout, undefined);
  });
});
