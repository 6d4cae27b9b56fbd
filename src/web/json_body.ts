import type { Class } from "../context/class.ts";
import { ValidationException } from "../http/http_exception.ts";
import { badRequest } from "./convert.ts";
import type { StandardSchemaV1 } from "../config/standard_schema.ts";

/**
 * The members a class's prototypes declare, by name: `true` for a setter, `false` for a method or
 * a getter without a setter. The nearest prototype wins; the names every object has from
 * `Object.prototype` are left out.
 */
export function prototypeMembers(cls: Class): Map<string, boolean> {
  const members = new Map<string, boolean>();
  for (let o: object | null = cls.prototype; o !== null && o !== Object.prototype;) {
    for (const key of Object.getOwnPropertyNames(o)) {
      if (members.has(key) || key in Object.prototype) continue;
      members.set(key, Object.getOwnPropertyDescriptor(o, key)?.set !== undefined);
    }
    o = Object.getPrototypeOf(o);
  }
  return members;
}

/**
 * Whether an instance's own property `key` is a field a body may set: an own, writable data
 * property not holding a function (an arrow-function field is behaviour too); an own accessor
 * counts by its setter. `undefined`: no own property of that name.
 */
export function fieldKind(instance: object, key: string): boolean | undefined {
  const d = Object.getOwnPropertyDescriptor(instance, key);
  if (d === undefined) return undefined;
  if (d.get !== undefined || d.set !== undefined) return d.set !== undefined;
  return typeof d.value !== "function" && d.writable === true;
}

/**
 * Compiles the binding of a JSON object onto a new instance of `cls`, as Spring's Jackson binding
 * does: a field is assigned, a setter is called (its throw is a 400). A key naming a method or a
 * read-only accessor is a 400; a key the class does not declare is ignored (Spring Boot's default,
 * so that clients may send fields a newer server reads), and so are the names every object has
 * from Object.prototype (`constructor`, `toString`, ...) unless the constructor made them a field.
 *
 * What the class's prototypes declare is read here, once; only the fields, which the constructor
 * makes, are looked at per instance.
 */
export function classBinding(cls: Class): (body: unknown) => unknown {
  const members = prototypeMembers(cls);
  return (body) => {
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw badRequest(`Request body must be a JSON object for ${cls.name}`);
    }
    const instance = new (cls as new () => Record<string, unknown>)();
    for (const key of Object.keys(body)) {
      const settable = fieldKind(instance, key) ?? members.get(key);
      if (settable === undefined) continue;
      if (!settable) {
        throw badRequest(
          `Request body property "${key}" is not a settable property of ${cls.name}`,
        );
      }
      try {
        instance[key] = (body as Record<string, unknown>)[key];
      } catch {
        throw badRequest(`Request body property "${key}" cannot be set on ${cls.name}`);
      }
    }
    return instance;
  };
}

/** Validates with a Standard Schema; issues become a 400 that lists them. */
export async function validateBody(schema: StandardSchemaV1, body: unknown): Promise<unknown> {
  const result = await schema["~standard"].validate(body);
  if (result.issues === undefined) return result.value;
  throw new ValidationException(result.issues.map((issue) => ({
    message: issue.message,
    path: (issue.path ?? []).map((p) => typeof p === "object" ? p.key : p),
  })));
}
