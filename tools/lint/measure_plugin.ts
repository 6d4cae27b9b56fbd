/// <reference lib="deno.unstable" />
// Loaded only by tools/code_shape.ts, through a configuration of its own: reports every function
// with its span, every non-null assertion, and each class's mutable fields (instance fields not
// `readonly`, private ones included), for the tool to count. Never part of `deno lint`.
import { functionName, visitFunctions } from "./code_shape_plugin.ts";

const plugin: Deno.lint.Plugin = {
  name: "measure",
  rules: {
    "function": {
      create(context) {
        return visitFunctions(context, (node, lines) => {
          context.report({ node, message: `${lines} ${functionName(node)}` });
        });
      },
    },
    "mutable-fields": {
      create(context) {
        const visit = (node: Deno.lint.ClassDeclaration | Deno.lint.ClassExpression) => {
          const mutable =
            node.body.body.filter((member) =>
              member.type === "PropertyDefinition" && !member.static && !member.readonly
            ).length;
          const name = node.id?.name ?? "(anonymous)";
          context.report({ node, message: `${mutable} ${name}` });
        };
        return { ClassDeclaration: visit, ClassExpression: visit };
      },
    },
    "non-null": {
      create(context) {
        return { TSNonNullExpression: (node) => context.report({ node, message: "!" }) };
      },
    },
  },
};

export default plugin;
