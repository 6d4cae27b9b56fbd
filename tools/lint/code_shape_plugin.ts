/// <reference lib="deno.unstable" />
// Bounds on the shape of the code under src/, kept by `deno lint` (deno.json's `lint.plugins`):
// a function that has grown past its bound is a sign that it does several things, which the next
// feature would make worse. The bounds are where the code is now, not where it should go: lower
// one when the code allows it, never raise it to let a change in.
//
// - `thaw/function-length`: no function in src/ over 120 lines, none in src/scheduling/ over 60
//   (from its first line to its closing brace, comments included).
// - `thaw/no-non-null-in-scheduling`: no `!` non-null assertion in src/scheduling/, whose job
//   states are a union by kind: a `!` there says a state is read where its kind is not known.
//
// `tools/code_shape.ts` measures the same functions (the longest, a named one) for notes.

/** The most lines a function may span, by the folder its file is in; the first match wins. */
export const FUNCTION_LINE_BOUNDS: readonly { readonly folder: string; readonly lines: number }[] =
  [
    { folder: "/src/scheduling/", lines: 60 },
    { folder: "/src/", lines: 120 },
  ];

type FunctionNode =
  | Deno.lint.FunctionDeclaration
  | Deno.lint.FunctionExpression
  | Deno.lint.ArrowFunctionExpression;

/** The line (1-based) of each offset in a text, by binary search over its line starts. */
export function lineOf(starts: readonly number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid] <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

/** Where each line of a text starts. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** A function's name as a reader would look it up: its own, its method's or its variable's. */
export function functionName(node: FunctionNode): string {
  if (node.type !== "ArrowFunctionExpression" && node.id) return node.id.name;
  const parent = node.parent;
  if (parent.type === "MethodDefinition" || parent.type === "Property") {
    return parent.key.type === "Identifier" ? parent.key.name : "(computed)";
  }
  if (parent.type === "VariableDeclarator" && parent.id.type === "Identifier") {
    return parent.id.name;
  }
  return "(anonymous)";
}

function boundOf(filename: string): number | undefined {
  const path = filename.replaceAll("\\", "/");
  return FUNCTION_LINE_BOUNDS.find(({ folder }) => path.includes(folder))?.lines;
}

/** Reports each function of a file with its span in lines, to `report`. */
export function visitFunctions(
  context: Deno.lint.RuleContext,
  report: (node: FunctionNode, lines: number) => void,
): Deno.lint.LintVisitor {
  let starts: number[] | undefined;
  const visit = (node: FunctionNode) => {
    starts ??= lineStarts(context.sourceCode.text);
    report(node, lineOf(starts, node.range[1]) - lineOf(starts, node.range[0]) + 1);
  };
  return { FunctionDeclaration: visit, FunctionExpression: visit, ArrowFunctionExpression: visit };
}

const plugin: Deno.lint.Plugin = {
  name: "thaw",
  rules: {
    "function-length": {
      create(context) {
        const bound = boundOf(context.filename);
        if (bound === undefined) return {};
        return visitFunctions(context, (node, lines) => {
          if (lines <= bound) return;
          context.report({
            node,
            message: `${functionName(node)} spans ${lines} lines, over the ${bound} of its folder`,
            hint: "Split it where it does two things: a step of its own, named for what it does",
          });
        });
      },
    },
    "no-non-null-in-scheduling": {
      create(context) {
        if (!context.filename.replaceAll("\\", "/").includes("/src/scheduling/")) return {};
        return {
          TSNonNullExpression(node) {
            context.report({
              node,
              message: "A non-null assertion in the scheduler",
              hint: "Narrow by the job's kind or state instead",
            });
          },
        };
      },
    },
  },
};

export default plugin;
