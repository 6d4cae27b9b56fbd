// An app's `@Endpoint` beans as endpoints of the actuator's table: each operation a route under
// `{base}/{id}`, listed by `mappings` under its class and method, and described in the OpenAPI
// document. Brought by `@Endpoint`: an app without an endpoint of its own carries none of this.
import type { BeanEntry } from "../context/application_context.ts";
import type { Class } from "../context/class.ts";
import { awaitedForm } from "../context/awaited_form.ts";
import { DefinitionError } from "../context/errors.ts";
import { HttpRequest } from "../http/http_request.ts";
import type { ApiResponseOptions } from "../openapi/api_docs.ts";
import type { DocumentedRoute } from "../openapi/documented_route.ts";
import { rawBodyOf } from "../runtime/node_incoming.ts";
import type { CompiledRoute } from "../web/compile.ts";
import type { ActuatorEndpoint } from "./actuator_endpoint.ts";
import { jsonAnswer } from "./actuator_endpoint.ts";
import { endpointRoute } from "./endpoint_route.ts";
import { endpointRecordOf, type OperationKind, type OperationRecord } from "./endpoint_records.ts";

// Spring Boot's `EndpointId`: lowercase letters and digits, starting with a letter.
const ID = /^[a-z][a-z0-9]*$/;
const HTTP = { read: "GET", write: "POST", delete: "DELETE" } as const;
const DECORATOR = {
  read: "@ReadOperation",
  write: "@WriteOperation",
  delete: "@DeleteOperation",
} as const;
const NO_STORE = { "cache-control": "no-store" };
const BYTES = { "content-type": "application/octet-stream", "cache-control": "no-store" };
// An answer is one JSON document, held whole before it is sent: an iterable that does not end
// (a feed, a subscription) is stopped here rather than held until the memory runs out.
const MOST_ITEMS = 10_000;
// JSON, as Spring takes it: no cross-site form can send it without the browser asking first.
const JSON_TYPE = /^application\/(?:[^;\s]*\+)?json\s*(?:;|$)/i;

/**
 * The app's `@Endpoint` beans; a wrong id, one of Thaw's (`taken`), two of one id or an operation
 * twice stop `bootstrap`, naming the bean.
 */
export function appEndpoints(
  beans: readonly BeanEntry[],
  taken: readonly string[],
): ActuatorEndpoint[] {
  const endpoints: ActuatorEndpoint[] = [];
  const byId = new Map<string, string>();
  for (const bean of beans) {
    const type = bean.type;
    const record = type === undefined ? undefined : endpointRecordOf(type);
    if (type === undefined || record?.id === undefined) continue;
    const id = record.id;
    const source = `bean "${bean.name}" (class ${type.name})`;
    const fail = (why: string): never => {
      throw new DefinitionError(`@Endpoint(${JSON.stringify(id)}) on ${source}: ${why}`);
    };
    if (!ID.test(id)) {
      fail("an endpoint's id is lowercase letters and digits, starting with a letter");
    }
    if (taken.includes(id)) {
      fail(`the actuator's own ${id} endpoint has this id; give it another`);
    }
    const other = byId.get(id);
    if (other !== undefined) fail(`${other} has this id too; give each its own`);
    byId.set(id, source);
    checkOperations(id, type.name, bean.instance, record.operations, record.selectors, fail);
    endpoints.push({
      id,
      source,
      routes: ({ base }) =>
        operationRoutes(bean, type, id, base, record.operations, record.selectors),
    });
  }
  return endpoints;
}

// Checked whether or not the endpoint is exposed, so that an app that exposes it in one
// environment only does not find its mistakes there first.
function checkOperations(
  id: string,
  typeName: string,
  instance: unknown,
  operations: readonly OperationRecord[],
  selectors: ReadonlyMap<string, readonly string[]>,
  fail: (why: string) => never,
): void {
  if (operations.length === 0) {
    fail("it has no @ReadOperation(), @WriteOperation() or @DeleteOperation() method");
  }
  const taken = new Map<string, string>();
  for (const { kind, methodName, query } of operations) {
    const names = selectors.get(methodName) ?? [];
    // By the count of segments: `/{name}` and `/{key}` match the same paths.
    const route = `${HTTP[kind]} /actuator/${id}${names.map(() => "/{…}").join("")}`;
    const other = taken.get(route);
    if (other !== undefined) fail(`${other} and ${methodName} are both ${route}`);
    taken.set(route, methodName);
    const where = `${typeName}.${methodName}()`;
    const clash = query.find((q) => names.includes(q.name));
    if (clash !== undefined) {
      fail(`${where}: "${clash.name}" is both a @Selector name and a query parameter`);
    }
    // Spring Boot binds each parameter by its name, which JavaScript does not keep: a parameter
    // past the named ones would be `undefined` on every call. `length` leaves out the ones with
    // a default, which may well go without a value.
    const method = (instance as Record<string, unknown> | undefined)?.[methodName];
    const given = names.length + query.length + (kind === "write" ? 1 : 0);
    if (typeof method === "function" && method.length > given) {
      fail(
        `${where} takes ${method.length} parameters, and its @Selector names and ` +
          (kind === "write"
            ? `its body give ${given}: a write takes its values from its JSON body`
            : `query parameters give ${given}: name the others in ` +
              `${DECORATOR[kind]}({ query: [...] })`),
      );
    }
  }
}

function operationRoutes(
  bean: BeanEntry,
  type: Class,
  id: string,
  base: string,
  operations: readonly OperationRecord[],
  selectors: ReadonlyMap<string, readonly string[]>,
): { routes: CompiledRoute[]; documented: DocumentedRoute[] } {
  const routes: CompiledRoute[] = [];
  const documented: DocumentedRoute[] = [];
  for (const { kind, methodName, query } of operations) {
    const names = selectors.get(methodName) ?? [];
    const path = `${base}/${id}${names.map((n) => `/{${n}}`).join("")}`;
    const httpMethod = HTTP[kind];
    const instance = bean.instance as Record<string, unknown>;
    const method = awaitedForm(instance[methodName]) as (...args: unknown[]) => unknown;
    const where = `${type.name}.${methodName}(): ${DECORATOR[kind]}`;
    const handler: CompiledRoute["handler"] = async (c) => {
      const args: unknown[] = names.map((n) => c.req.param(n) ?? "");
      if (query.length > 0) {
        const values = query.map(({ name }) => c.req.query(name));
        const missing = query.filter((q, i) => q.required && values[i] === undefined);
        if (missing.length > 0) return missingQuery(missing.map((q) => q.name));
        args.push(...values);
      }
      if (kind === "write") {
        const body = await bodyOf(c.req.raw, c.env);
        if (body instanceof Response) return body;
        args.push(body);
      }
      return await answer(kind, await method.apply(instance, args), where);
    };
    routes.push({
      ...endpointRoute(httpMethod, path, handler),
      method: { type, methodName, binders: [] },
    });
    documented.push({
      httpMethod,
      path,
      variables: names,
      operation: {
        operationId: `${id}${kind[0].toUpperCase()}${kind.slice(1)}`,
        tags: ["Actuator"],
        summary: `The ${id} endpoint's ${kind} (${type.name}.${methodName})`,
        responses: responses(kind, query.length > 0),
      },
    });
  }
  return { routes, documented };
}

// Spring Boot's answers: a value as JSON; no value a 404 for a read, a 204 for a write or delete;
// bytes as they are. `where` names the method, for the refusal of an iterable without end.
async function answer(kind: OperationKind, value: unknown, where: string): Promise<Response> {
  if (value instanceof Response) return value;
  if (value === undefined || value === null) {
    return new Response(null, { status: kind === "read" ? 404 : 204, headers: NO_STORE });
  }
  // Where JSON would write an object of indexes (`{"0":0}`), or `{}`.
  if (
    ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof Blob ||
    value instanceof ReadableStream
  ) {
    return new Response(value as BodyInit, { headers: BYTES });
  }
  if (iterable(value)) return jsonAnswer(JSON.stringify(await collected(value, where)));
  return jsonAnswer(JSON.stringify(value));
}

// Spring Boot collects a `Flux` into a list the same way: the answer stays one JSON document,
// whose status can still say that the iterable failed half way, as a stream's could not.
function iterable(value: unknown): value is AsyncIterable<unknown> | Iterable<unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    typeof (value as { toJSON?: unknown }).toJSON !== "function" &&
    (Symbol.asyncIterator in value || Symbol.iterator in value);
}

async function collected(
  value: AsyncIterable<unknown> | Iterable<unknown>,
  where: string,
): Promise<unknown[]> {
  const items: unknown[] = [];
  // Leaving the loop by the throw ends the iterable (its `finally` runs).
  for await (const item of value) {
    if (items.length === MOST_ITEMS) {
      throw new Error(
        `${where} answered an iterable of more than ${MOST_ITEMS} items; answer a page of them ` +
          "(a query parameter can say which), or a Response that streams them",
      );
    }
    items.push(item);
  }
  return items;
}

function missingQuery(names: readonly string[]): Response {
  const what = names.length === 1 ? "parameter" : "parameters";
  return jsonAnswer(JSON.stringify({ error: `missing query ${what} ${names.join(", ")}` }), 400);
}

// A write's body: a JSON object, `{}` when there is none; the 4xx that says why not, else.
async function bodyOf(raw: Request, env: unknown): Promise<object | Response> {
  const request = new HttpRequest(raw, { rawBody: rawBodyOf(env) });
  const text = await request.text();
  const type = raw.headers.get("content-type");
  // The type first: an HTML form with no fields sends an empty body without a preflight.
  if (type !== null && !JSON_TYPE.test(type)) return notJson();
  if (text.trim() === "") return {};
  if (type === null) return notJson();
  const body = await request.json().catch(() => undefined);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return jsonAnswer(JSON.stringify({ error: "the body must be a JSON object" }), 400);
  }
  return body;
}

function notJson(): Response {
  return jsonAnswer(JSON.stringify({ error: "send the body as application/json" }), 415);
}

function responses(kind: OperationKind, query: boolean): ReadonlyMap<number, ApiResponseOptions> {
  return new Map<number, ApiResponseOptions>([
    ...(kind === "read"
      ? [[200, { description: "The answer" }], [404, { description: "Nothing to answer" }]] as const
      : [[200, { description: "The answer" }], [204, { description: "Done, no answer" }]] as const),
    ...(query ? [[400, { description: "A query parameter is missing" }]] as const : []),
  ]);
}
