import { ownControllerRecord } from "./route_record.ts";
import type { MappedMethod } from "./route_table.ts";
import type { ParameterBinder } from "./binder.ts";

/** A decorator that maps a method to a route. */
export type MappingDecorator = (
  // deno-lint-ignore no-explicit-any
  value: (...args: any[]) => unknown,
  context: ClassMethodDecoratorContext,
) => void;

function mapping(
  httpMethod: MappedMethod,
  path: string,
  binders: ParameterBinder[],
): MappingDecorator {
  if (typeof path !== "string") {
    throw new TypeError(`@${httpMethod} mapping: the path must be a string, got ${typeof path}`);
  }
  const frozen = Object.freeze([...binders]);
  return (_value, context) => {
    if (context.kind !== "method") {
      throw new TypeError(`@${httpMethod} mapping on ${String(context.name)}: methods only`);
    }
    ownControllerRecord(context.metadata).routes.push({
      httpMethod,
      path,
      binders: frozen,
      methodName: String(context.name),
      isStatic: context.static,
      get: context.access.get as (instance: unknown) => unknown,
    });
  };
}

/**
 * Maps a method to `GET path`. `{name}` segments are path variables; the binders give the
 * method's arguments in order.
 *
 * @example
 * ```ts
 * import { GetMapping, PathVariable, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class UserController {
 *   @GetMapping("/users/{id}", PathVariable("id", Number))
 *   get(id: number) {
 *     return { id };
 *   }
 * }
 * ```
 */
export function GetMapping(path: string, ...binders: ParameterBinder[]): MappingDecorator {
  return mapping("GET", path, binders);
}

/**
 * Maps a method to `POST path`.
 *
 * @example
 * ```ts
 * import { PostMapping, RequestBody, ResponseEntity, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class NoteController {
 *   @PostMapping("/notes", RequestBody())
 *   create(note: unknown) {
 *     return ResponseEntity.created("/notes/1").withJson(note);
 *   }
 * }
 * ```
 */
export function PostMapping(path: string, ...binders: ParameterBinder[]): MappingDecorator {
  return mapping("POST", path, binders);
}

/**
 * Maps a method to `PUT path`.
 *
 * @example
 * ```ts
 * import { PathVariable, PutMapping, RequestBody, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class NoteController {
 *   @PutMapping("/notes/{id}", PathVariable("id", Number), RequestBody())
 *   replace(id: number, note: object) {
 *     return { id, ...note };
 *   }
 * }
 * ```
 */
export function PutMapping(path: string, ...binders: ParameterBinder[]): MappingDecorator {
  return mapping("PUT", path, binders);
}

/**
 * Maps a method to `DELETE path`.
 *
 * @example
 * ```ts
 * import { DeleteMapping, PathVariable, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class NoteController {
 *   @DeleteMapping("/notes/{id}", PathVariable("id", Number))
 *   remove(_id: number): void {}
 * }
 * ```
 */
export function DeleteMapping(path: string, ...binders: ParameterBinder[]): MappingDecorator {
  return mapping("DELETE", path, binders);
}

/**
 * Maps a method to `PATCH path`.
 *
 * @example
 * ```ts
 * import { PatchMapping, PathVariable, RequestBody, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class NoteController {
 *   @PatchMapping("/notes/{id}", PathVariable("id", Number), RequestBody())
 *   patch(id: number, changes: object) {
 *     return { id, ...changes };
 *   }
 * }
 * ```
 */
export function PatchMapping(path: string, ...binders: ParameterBinder[]): MappingDecorator {
  return mapping("PATCH", path, binders);
}
