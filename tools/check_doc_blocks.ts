// Type-checks every TypeScript block of the given markdown files as a user would paste it into a
// module of their own, with `@thaw/thaw` pointing at this checkout, so that an example the
// library's types no longer accept fails the lint. A block fenced as ```ts fragment continues or
// quotes code shown elsewhere (the sample app's files are checked where they live) and is skipped.
// Asserting blocks also run, in tests/examples/readme_examples_test.ts.

const root = new URL("../", import.meta.url);
const dir = new URL(".tmp/doc-blocks/", root);
await Deno.remove(dir, { recursive: true }).catch(() => {});
await Deno.mkdir(dir, { recursive: true });

// Every entry point of deno.json, as a user's import names it.
const { exports } = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))) as {
  exports: Record<string, string>;
};
const local = (code: string) =>
  code.replace(/"@thaw\/thaw(\/[a-z-]+)?"/g, (specifier, sub: string | undefined) => {
    const file = exports[`.${sub ?? ""}`];
    return file === undefined ? specifier : JSON.stringify(`../..${file.slice(1)}`);
  });

const written: string[] = [];
let fragments = 0;
for (const doc of Deno.args.length > 0 ? Deno.args : ["README.md"]) {
  const lines = (await Deno.readTextFile(new URL(doc, root))).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(ts|typescript)(?:\s+(\S+))?\s*$/.exec(lines[i]);
    if (fence === null) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end].startsWith("```")) end++;
    if (fence[2] === "fragment") fragments++;
    else {
      const code = local(lines.slice(i + 1, end).join("\n"));
      const name = `${doc.replace(/\W/g, "_")}_line_${i + 2}.ts`;
      await Deno.writeTextFile(new URL(name, dir), code + "\n");
      written.push(`.tmp/doc-blocks/${name}`);
    }
    i = end;
  }
}

const { success } = await new Deno.Command(Deno.execPath(), {
  args: ["check", "--quiet", ...written],
  cwd: root,
}).output().then(async (output) => {
  await Deno.stderr.write(output.stderr);
  return output;
});
if (!success) {
  console.error(
    "A TypeScript block of the docs does not compile (its file under .tmp/doc-blocks/ is named " +
      "for the doc and the block's first line). Fix the block, or fence a quote of code checked " +
      "elsewhere as ```ts fragment.",
  );
  Deno.exit(1);
}
console.log(`docs: ${written.length} TypeScript block(s) compile; ${fragments} fragment(s)`);
