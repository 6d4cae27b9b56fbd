/// <reference lib="deno.unstable" />
// Loaded only by tools/code_shape.ts, through a configuration of its own: reports every function
// with its span, and every non-null assertion, for the tool to count. Never part of `deno lint`.
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
    "non-null": {
      create(context) {
        return { TSNonNullExpression: (node) => context.report({ node, message: "!" }) };
      },
    },
  },
};

export default plugin;
