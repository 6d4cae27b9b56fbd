/**
 * Throws when a decorator was called the legacy way. Thaw's decorators are standard (TC39)
 * decorators, called with a context object; TypeScript's `experimentalDecorators` (and Bun, tsx or
 * esbuild reading it from tsconfig.json) calls them as `(class)`, `(prototype, name)` or
 * `(prototype, name, descriptor)` instead, which would otherwise fail deep inside with a
 * `TypeError` about `kind`. The message names the class and member, and the setting to change.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkDecoratorCall } from "./decorator_call.ts";
 *
 * class Users {}
 * // What a legacy class decorator receives: the class alone.
 * assert.throws(
 *   () => checkDecoratorCall("@RestController", Users, undefined),
 *   /@RestController on class Users was called as a legacy decorator.*"experimentalDecorators"/,
 * );
 * ```
 */
export function checkDecoratorCall(decorator: string, target: unknown, context: unknown): void {
  if (
    typeof context === "object" && context !== null &&
    typeof (context as { kind?: unknown }).kind === "string"
  ) return;
  const owner = typeof target === "function"
    ? target
    : typeof target === "object" && target !== null
    ? (target as { constructor?: unknown }).constructor
    : undefined;
  const className = typeof owner === "function" && owner.name !== "" ? owner.name : "(anonymous)";
  const where = typeof context === "string" || typeof context === "symbol"
    ? `${className}.${String(context)}`
    : `class ${className}`;
  throw new TypeError(
    `${decorator} on ${where} was called as a legacy decorator: Thaw's decorators are standard ` +
      `(TC39) decorators. Remove "experimentalDecorators": true from compilerOptions in ` +
      `tsconfig.json (or deno.json): TypeScript, Bun, tsx and esbuild then emit standard ones`,
  );
}
