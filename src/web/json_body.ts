import type { Class } from "../context/class_record.ts";
import { ValidationException } from "../http/http_exception.ts";
import { badRequest } from "./convert.ts";
import type { StandardSchemaV1 } from "./standard_schema.ts";

type Settable = "yes" | "no" | "unknown";

// Whether a body key may be assigned on an instance: a field (an own data property the
// constructor made, not holding a function) or an accessor with a setter, own or on the class's
// prototype chain, is settable; a method, a getter without a setter or a function-valued field is
// a member the body must not replace; anything else is unknown. Names every object has from
// Object.prototype (`constructor`, `toString`, ...) are unknown unless the constructor made them a
// field: they are no property a client can mean.
function settable(instance: object, key: string): Settable {
  const inherited = key in Object.prototype;
  for (let o: object | null = instance; o !== null && o !== Object.prototype;) {
    if (inherited && o !== instance) return "unknown";
    const d = Object.getOwnPropertyDescriptor(o, key);
    if (d !== undefined) {
      if (d.get !== undefined || d.set !== undefined) return d.set !== undefined ? "yes" : "no";
      return o === instance && typeof d.value !== "function" && d.writable === true ? "yes" : "no";
    }
    o = Object.getPrototypeOf(o);
  }
  return "unknown";
}

/**
 * Instantiates `cls` and gives it the body's properties that the class declares, as Spring's
 * Jackson binding does: a field is assigned, a setter is called (its throw is a 400). A key naming
 * a method or a read-only accessor is a 400; a key the class does not declare is ignored (Spring
 * Boot's default, so that clients may send fields a newer server reads).
 */
export function toInstance(cls: Class, body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw badRequest(`Request body must be a JSON object for ${cls.name}`);
  }
  const instance = new (cls as new () => Record<string, unknown>)();
  for (const key of Object.keys(body)) {
    const kind = settable(instance, key);
    if (kind === "unknown") continue;
    if (kind === "no") {
      throw badRequest(`Request body property "${key}" is not a settable property of ${cls.name}`);
    }
    try {
      instance[key] = (body as Record<string, unknown>)[key];
    } catch {
      throw badRequest(`Request body property "${key}" cannot be set on ${cls.name}`);
    }
  }
  return instance;
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
