/// <reference lib="deno.unstable" />
// What src/ may not do at a module's top level, kept by `deno lint` (deno.json's `lint.plugins`):
// an edge worker loads Thaw at global scope, where workerd (as `wrangler dev` ships it) refuses
// I/O, timers, random values and AbortControllers ("Disallowed operation called within global
// scope"), so the worker never starts.
//
// - `thaw-edge/no-global-scope-effects`: no `new AbortController()`, `AbortSignal.timeout()`,
//   `setTimeout`, `setInterval`, `fetch` or `crypto.getRandomValues`/`randomUUID` outside a
//   function (a static field or block of a class counts as outside: it runs as the module loads).
//
// A constructor or a field initializer runs wherever `new` runs, a worker's `await bootstrap()`
// included: that is tests/edge/workerd_global_scope_test.ts's part, which loads every worker of
// tests/fixtures/ in that workerd.

/** The calls refused at global scope, as `callee` or `object.property`. */
export const REFUSED_AT_GLOBAL_SCOPE: readonly string[] = [
  "AbortController",
  "AbortSignal.timeout",
  "setTimeout",
  "setInterval",
  "fetch",
  "crypto.getRandomValues",
  "crypto.randomUUID",
];

function calleeName(callee: Deno.lint.Node): string | undefined {
  if (callee.type === "Identifier") return callee.name;
  if (
    callee.type === "MemberExpression" && callee.object.type === "Identifier" &&
    callee.property.type === "Identifier"
  ) {
    return `${callee.object.name}.${callee.property.name}`;
  }
  return undefined;
}

// Whether `node` runs as its module loads: no function encloses it, or only a class's static part.
function atGlobalScope(node: Deno.lint.CallExpression | Deno.lint.NewExpression): boolean {
  // Every node but the Program has a parent; the types do not say it of each alike.
  const parentOf = (n: Deno.lint.Node) =>
    n.type === "Program" ? undefined : (n as { parent?: Deno.lint.Node }).parent;
  for (let at = parentOf(node); at !== undefined; at = parentOf(at)) {
    switch (at.type) {
      case "FunctionDeclaration":
      case "FunctionExpression":
      case "ArrowFunctionExpression":
        return false;
      case "PropertyDefinition":
        if (!at.static) return false;
        break;
      case "Program":
        return true;
    }
  }
  return true;
}

const plugin: Deno.lint.Plugin = {
  name: "thaw-edge",
  rules: {
    "no-global-scope-effects": {
      create(context) {
        if (!context.filename.replaceAll("\\", "/").includes("/src/")) return {};
        const check = (node: Deno.lint.CallExpression | Deno.lint.NewExpression) => {
          const name = calleeName(node.callee);
          if (name === undefined || !REFUSED_AT_GLOBAL_SCOPE.includes(name)) return;
          if (!atGlobalScope(node)) return;
          context.report({
            node,
            message: `${name} at a module's top level: workerd refuses it at global scope`,
            hint: "Make it when it is first needed, inside the function that needs it",
          });
        };
        return { CallExpression: check, NewExpression: check };
      },
    },
  },
};

export default plugin;
