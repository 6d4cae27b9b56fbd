// The reference table of every key Thaw reads, made from their declarations
// (src/config/thaw_keys.ts), so that the docs cannot forget one. Lint checks that the table in
// docs/beans-and-configuration.md is the one made here; `--write` puts it there.
// deno run --allow-read --allow-run [--allow-write=docs] tools/config_keys.ts [--write]
import { envName } from "../src/config/env_overrides.ts";
import { keyDeclarations } from "../src/config/thaw_keys.ts";
// Declares the keys of the actuator, of the client address and of the logging feature, which the
// table lists with the core's.
import "../src/config/management_keys.ts";
import "../src/config/forward_headers_keys.ts";
import "../src/config/logging_keys.ts";
import "../src/config/task_keys.ts";
import "../src/config/kafka_keys.ts";
import "../src/config/broadcast_keys.ts";
import { KEY_DOCS } from "../src/config/thaw_key_docs.ts";
import type { SettingKey } from "../src/config/thaw_settings.ts";

const DOC = new URL("../docs/beans-and-configuration.md", import.meta.url);
const START = "<!-- keys: made by tools/config_keys.ts from the declarations; do not edit -->";
const END = "<!-- keys: end -->";

function typeOf(d: ReturnType<typeof keyDeclarations>[number][1]): string {
  switch (d.type) {
    case "integer":
      return `integer, ${d.min ?? 0} to ${d.max ?? "2^53 - 1"}`;
    case "choice":
      return d.choices!.map((c) => `\`${c}\``).join(" or ");
    case "list":
      return "list (or one text)";
    case "feature":
      return "checked by its feature";
    default:
      return d.type;
  }
}

function table(): string {
  const rows = keyDeclarations().map(([key, d]) => {
    const fallback = d.default === undefined
      ? ""
      : Array.isArray(d.default)
      ? (d.default.length === 0 ? "none" : d.default.join(", "))
      : `\`${d.default}\``;
    // A key that holds declared keys is reached through them.
    const parent = keyDeclarations().some(([other]) => other.startsWith(`${key}.`));
    const variable = parent ? "" : `\`${envName(key.split("."))}\``;
    return `| \`${key}\` | ${typeOf(d)} | ${fallback} | ${variable} | ${
      KEY_DOCS[key as SettingKey]
    } |`;
  });
  return [
    START,
    "",
    "| key | type | default | environment | what it does |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
    END,
  ].join("\n");
}

const text = await Deno.readTextFile(DOC);
const from = text.indexOf(START);
const to = text.indexOf(END);
if (from === -1 || to === -1) {
  console.error(`${DOC.pathname}: the key table's markers are missing`);
  Deno.exit(1);
}
// As `deno fmt` lays the page out (it aligns a table's columns), so that both checks agree.
async function formatted(markdown: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=md", "-"],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(markdown));
  await writer.close();
  const { success, stdout } = await child.output();
  if (!success) throw new Error("deno fmt refused the page");
  return new TextDecoder().decode(stdout);
}

const made = await formatted(text.slice(0, from) + table() + text.slice(to + END.length));
if (Deno.args.includes("--write")) {
  await Deno.writeTextFile(DOC, made);
} else if (made !== text) {
  console.error(
    "docs/beans-and-configuration.md: the table of keys is not the one their declarations " +
      "make: run deno run --allow-read --allow-run --allow-write=docs tools/config_keys.ts --write",
  );
  Deno.exit(1);
} else {
  console.log(`docs: the table of ${keyDeclarations().length} keys matches their declarations`);
}
