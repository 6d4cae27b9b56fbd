// TC39 decorators hand `context.metadata` to every decorator and store it on the class under
// `Symbol.metadata`. Runtimes that lack the symbol (Node 20, workerd) get the one that esbuild and
// TypeScript fall back to, so classes compiled by either tool and by Deno or Bun share it.
// This module must be evaluated before any decorated class: mod.ts imports it first.
(Symbol as { metadata?: symbol }).metadata ??= Symbol.for("Symbol.metadata");

export {};
