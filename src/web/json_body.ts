import type { Class } from "../context/class_record.ts";
import { ValidationException } from "../http/http_exception.ts";
import { badRequest } from "./convert.ts";
import type { StandardSchemaV1 } from "./standard_schema.ts";

const dropProto = (key: string, value: unknown) => key === "__proto__" ? undefined : value;

/**
 * `JSON.parse` with every `__proto__` key removed, at any depth, so that no later merge or
 * assignment can reach a prototype. The reviver is slow, so it runs only when the text could
 * hold such a key (spelled out, or hidden behind a `\u` escape).
 */
export function parseJsonBody(text: string): unknown {
  try {
    return text.includes("__proto__") || text.includes("\\u")
      ? JSON.parse(text, dropProto)
      : JSON.parse(text);
  } catch (error) {
    throw badRequest(`Malformed JSON in request body: ${(error as Error).message}`);
  }
}

/** Instantiates `cls` and gives it the body's own properties, through its setters if it has any. */
export function toInstance(cls: Class, body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw badRequest(`Request body must be a JSON object for ${cls.name}`);
  }
  const instance = new (cls as new () => Record<string, unknown>)();
  for (const key of Object.keys(body)) {
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
