// What every method decorator of `@thaw/thaw/tasks` does with the method it is put on: checks that
// it was called as a decorator, on a public instance method (declared async where the decorator
// holds the method's promise), leaves its mark, and puts its interceptor around the method.
import type { Class } from "../context/class.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { declaredAsync, interceptMethod } from "../context/interceptors.ts";
import { markMethod } from "./method_marks.ts";

/** One decorator's use on one method. */
export interface MethodDecoration<T> {
  /** The decorator as the user wrote it: `@Lockable`. */
  readonly decorator: string;
  /** What it does to a method, for the refusal of a static or private one: `locks`. */
  readonly does: string;
  /** Why the method must answer with a promise, as the refusals say it. */
  readonly promise: string;
  /** Whether the method must be declared `async` (else the decorator makes it answer a promise). */
  readonly declaredAsync: boolean;
  /** Where the mark is kept, and the mark. */
  readonly key: symbol;
  readonly mark: T;
  /** The interceptor, registered by `tasks()`. */
  readonly interceptor: Class;
}

/** Checks the method `context` names, marks it and intercepts it; a `TypeError` names it. */
export function decorateMethod<T>(
  value: unknown,
  context: ClassMethodDecoratorContext,
  decoration: MethodDecoration<T>,
): void {
  const { decorator } = decoration;
  checkDecoratorCall(decorator, value, context);
  const name = String(context.name);
  if (context.kind !== "method" || context.static || context.private) {
    throw new TypeError(
      `${decorator} on ${name}: it ${decoration.does} public instance methods only`,
    );
  }
  if (decoration.declaredAsync && !declaredAsync(value)) {
    throw new TypeError(`${decorator} on ${name}: ${decoration.promise}`);
  }
  markMethod(context.metadata, decoration.key, name, decoration.mark);
  interceptMethod(context, [decoration.interceptor], decoration.promise);
}
