import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { yamlLines } from "../../src/config/yaml_lines.ts";
import { parseYaml } from "../../src/config/yaml_config.ts";
import { ConfigError } from "../../src/config/config_error.ts";

describe("yamlLines", () => {
  it("gives the line of every key and list item, block and flow style", () => {
    const lines = yamlLines(
      "app:\n  name: x\nsearch:\n  - name: main\n    hosts:\n      - http://a\n      - http://b\n" +
        "    migrations: { enabled: true }\n  - name: two\n    hosts: [x, y]\n",
    );
    assert.equal(lines.get("app.name"), 2);
    assert.equal(lines.get("search"), 3);
    assert.equal(lines.get("search[0].name"), 4);
    assert.equal(lines.get("search[0].hosts[1]"), 7);
    assert.equal(lines.get("search[0].migrations.enabled"), 8);
    assert.equal(lines.get("search[1].hosts[1]"), 10);
    assert.equal(lines.get("search[2]"), undefined);
  });

  it("returns nothing for text that is not YAML, leaving the error to the parser", () => {
    assert.equal(yamlLines("a: [1,\n").size, 0);
  });
});

describe("parseYaml against hostile documents", () => {
  it("refuses an alias bomb instead of expanding it", () => {
    const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i), name = String.fromCharCode(97 + i);
      lines.push(`${name}: &${name} [${Array(20).fill(`*${prev}`).join(", ")}]`);
    }
    assert.throws(
      () => parseYaml(lines.join("\n"), "bomb.yml"),
      (e: unknown) =>
        e instanceof ConfigError && /^bomb\.yml:\d+:\d+: aliases exceeded/.test(e.message),
    );
  });
});
