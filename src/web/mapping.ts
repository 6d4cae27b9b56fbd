import { ownControllerRecord } from "./route_record.ts";
import type { MappedMethod } from "./route_table.ts";
import type { ParameterBinder } from "./binder.ts";
import type { HandlerArguments, PathCheck, SignatureCheck } from "./handler_signature.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { methodGetter } from "../context/class_record.ts";

/**
 * A decorator that maps a method to a route. It compiles only on a method whose parameters take
 * the arguments `A` its binders give, one parameter per binder, and only where `Check` is
 * `unknown` (the path's check); otherwise the error names what is wrong. Without `A`, a decorator
 * of unknown binders, it takes any method.
 */
// deno-lint-ignore no-explicit-any
export type MappingDecorator<A extends readonly unknown[] = any[], Check = unknown> = <
  This,
  // deno-lint-ignore no-explicit-any
  M extends (this: This, ...args: any) => unknown,
>(
  value: M & SignatureCheck<Parameters<M>, A> & Check,
  context: ClassMethodDecoratorContext<This, M>,
) => void;

/** The decorator a mapping with `path` and `binders` returns. */
export type MappingFor<P extends string, B extends readonly ParameterBinder[]> = MappingDecorator<
  HandlerArguments<B>,
  PathCheck<P, B>
>;

function mapping(
  httpMethod: MappedMethod,
  path: string,
  binders: readonly ParameterBinder[],
): (value: unknown, context: ClassMethodDecoratorContext) => void {
  if (typeof path !== "string") {
    throw new TypeError(`@${httpMethod} mapping: the path must be a string, got ${typeof path}`);
  }
  const frozen = Object.freeze([...binders]);
  return (_value, context) => {
    checkDecoratorCall(
      `@${httpMethod.charAt(0)}${httpMethod.slice(1).toLowerCase()}Mapping`,
      _value,
      context,
    );
    if (context.kind !== "method") {
      throw new TypeError(`@${httpMethod} mapping on ${String(context.name)}: methods only`);
    }
    ownControllerRecord(context.metadata).routes.push({
      httpMethod,
      path,
      binders: frozen,
      methodName: String(context.name),
      isStatic: context.static,
      get: methodGetter(context as ClassMethodDecoratorContext),
    });
  };
}

/**
 * Maps a method to `GET path`. `{name}` segments are path variables; the binders give the
 * method's arguments in order, and the method must take what they give: one parameter per
 * binder, each accepting its binder's type, or the decorator does not compile.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, GetMapping, PathVariable, RequestParam, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class UserController {
 *   @GetMapping("/users/{id}", PathVariable("id", Number), RequestParam("fields", { required: false }))
 *   get(id: number, fields: string | undefined) {
 *     return { id, fields: fields ?? "all" };
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [UserController] });
 * const res = await app.fetch(new Request("http://localhost/users/7"));
 * assert.deepEqual(await res.json(), { id: 7, fields: "all" });
 * ```
 */
export function GetMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("GET", path, binders) as MappingFor<P, B>;
}

/**
 * Maps a method to `POST path`. A `RequestBody(schema)` gives the schema's output type, so the
 * parameter is typed from the schema rather than restated by hand.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { bootstrap, PostMapping, RequestBody, ResponseEntity, RestController } from "@thaw/thaw";
 *
 * const NewNote = z.object({ text: z.string().min(1) });
 *
 * @RestController()
 * class NoteController {
 *   @PostMapping("/notes", RequestBody(NewNote))
 *   create(note: z.output<typeof NewNote>) {
 *     return ResponseEntity.created("/notes/1").withJson({ id: 1, text: note.text });
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [NoteController] });
 * const res = await app.fetch(
 *   new Request("http://localhost/notes", {
 *     method: "POST",
 *     headers: { "content-type": "application/json" },
 *     body: JSON.stringify({ text: "milk" }),
 *   }),
 * );
 * assert.equal(res.status, 201);
 * assert.deepEqual(await res.json(), { id: 1, text: "milk" });
 * ```
 */
export function PostMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("POST", path, binders) as MappingFor<P, B>;
}

/**
 * Maps a method to `PUT path`. `RequestBody()` without a class or schema gives `unknown`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, PathVariable, PutMapping, RequestBody, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class NoteController {
 *   @PutMapping("/notes/{id}", PathVariable("id", Number), RequestBody())
 *   replace(id: number, note: unknown) {
 *     return { id, note };
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [NoteController] });
 * const res = await app.fetch(
 *   new Request("http://localhost/notes/3", {
 *     method: "PUT",
 *     headers: { "content-type": "application/json" },
 *     body: '"milk"',
 *   }),
 * );
 * assert.deepEqual(await res.json(), { id: 3, note: "milk" });
 * ```
 */
export function PutMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("PUT", path, binders) as MappingFor<P, B>;
}

/**
 * Maps a method to `DELETE path`. A method that returns nothing answers 204 No Content.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, DeleteMapping, PathVariable, RestController } from "@thaw/thaw";
 *
 * const removed: number[] = [];
 *
 * @RestController()
 * class NoteController {
 *   @DeleteMapping("/notes/{id}", PathVariable("id", Number))
 *   remove(id: number): void {
 *     removed.push(id);
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [NoteController] });
 * const res = await app.fetch(new Request("http://localhost/notes/4", { method: "DELETE" }));
 * assert.equal(res.status, 204);
 * assert.deepEqual(removed, [4]);
 * ```
 */
export function DeleteMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("DELETE", path, binders) as MappingFor<P, B>;
}

/**
 * Maps a method to `PATCH path`. `RequestBody(Class)` gives an instance of the class.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, PatchMapping, PathVariable, RequestBody, RestController } from "@thaw/thaw";
 *
 * class NoteChanges {
 *   text = "";
 * }
 *
 * @RestController()
 * class NoteController {
 *   @PatchMapping("/notes/{id}", PathVariable("id", Number), RequestBody(NoteChanges))
 *   patch(id: number, changes: NoteChanges) {
 *     return { id, text: changes.text, isInstance: changes instanceof NoteChanges };
 *   }
 * }
 *
 * const app = await bootstrap({ controllers: [NoteController] });
 * const res = await app.fetch(
 *   new Request("http://localhost/notes/5", {
 *     method: "PATCH",
 *     headers: { "content-type": "application/json" },
 *     body: JSON.stringify({ text: "eggs" }),
 *   }),
 * );
 * assert.deepEqual(await res.json(), { id: 5, text: "eggs", isInstance: true });
 * ```
 */
export function PatchMapping<
  const P extends string,
  const B extends readonly ParameterBinder[],
>(path: P, ...binders: B): MappingFor<P, B> {
  return mapping("PATCH", path, binders) as MappingFor<P, B>;
}
