/**
 * `@PermitAll()`: a controller, or one of its methods, that any caller may reach with
 * `security()` on, as Jakarta's `@PermitAll` and Spring's `permitAll()` say it.
 *
 * @module
 */
import type { Class } from "../context/class.ts";
import { entryChain, entryOf, ownEntry } from "../context/class_record.ts";

interface PermitEntry {
  type: boolean;
  readonly methods: Set<string>;
}

const PERMIT = Symbol("thaw.permitAll");

/** The decorator {@linkcode PermitAll} returns, for a class or a method. */
export type PermitAllDecorator = (
  target: unknown,
  context: ClassDecoratorContext | ClassMethodDecoratorContext,
) => void;

/**
 * Any caller, with a token or without, may reach the routes of the class or of the method it
 * decorates; the others of an app with `security()` need an authenticated caller.
 *
 * The example, which the docs' checks run (a decorator line cannot sit in a JSDoc example), is in
 * https://github.com/thaw/thaw/blob/main/docs/security.md.
 */
export function PermitAll(): PermitAllDecorator {
  return (_target, context) => {
    if (context?.kind !== "class" && context?.kind !== "method") {
      throw new TypeError("@PermitAll() decorates a class or a method");
    }
    const entry = ownEntry<PermitEntry>(
      context.metadata,
      PERMIT,
      () => ({ type: false, methods: new Set() }),
    );
    if (context.kind === "class") entry.type = true;
    else entry.methods.add(String(context.name));
  };
}

/** Whether `@PermitAll()` is on `type` (or a superclass), or on its method `methodName`. */
export function permitted(type: Class, methodName: string): boolean {
  return entryChain<PermitEntry>(type, PERMIT).some((entry) =>
    entry.type || entry.methods.has(methodName)
  );
}

/**
 * The class whose `@PermitAll()` is on the method `methodName` itself, the most derived of
 * `type`'s chain that declares anything of it; none when no such class permits it. `secures(cls)`
 * says whether a class's own decorators secure the method, so that a subclass's secured override
 * is not opened by its superclass's `@PermitAll()` (and one it opens is, whatever its superclass
 * said). That class's own checks of the method still apply: see `planOf` in method_security.ts.
 */
export function permittingClass(
  type: Class,
  methodName: string,
  secures: (cls: Class) => boolean,
): Class | undefined {
  for (
    let c: unknown = type;
    typeof c === "function" && c !== Function.prototype;
    c = Object.getPrototypeOf(c)
  ) {
    if (entryOf<PermitEntry>(c as Class, PERMIT)?.methods.has(methodName)) return c as Class;
    if (secures(c as Class)) return undefined;
  }
  return undefined;
}
