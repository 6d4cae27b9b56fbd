import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { JsonSyntaxError, jsonValueProblem, parseJsonBytes } from "../../files/json_text.ts";
import { MigrationFileError } from "../../migration_error.ts";
import { policyApiOf } from "./policy_api.ts";
import { indexNameProblem, policyIdProblem, templateNameProblem } from "./resource_names.ts";
import type { ReindexSpec, SearchMethod, SearchRequest } from "./search_request.ts";
import { definedFields } from "../../../defined_fields.ts";

const METHODS: ReadonlySet<string> = new Set<SearchMethod>([
  "GET",
  "PUT",
  "POST",
  "DELETE",
  "HEAD",
  "PATCH",
]);
const ENVELOPE_KEYS = new Set(["method", "path", "body", "name", "repeatable"]);
// Not idempotent: sent again, they would seed a document twice or delete what came after.
const RUN_ONCE = new Set(["POST", "DELETE", "PATCH"]);
const INDEX_KEYS = ["settings", "mappings", "aliases"] as const;
// Top-level keys of a composable index template that stay outside `template` when wrapping.
const TEMPLATE_KEYS = new Set([
  "index_patterns",
  "priority",
  "composed_of",
  "version",
  "_meta",
  "data_stream",
]);
const SUFFIX = /-(template|policy|index)$/;
const REINDEX_KEYS = new Set([
  "alias",
  "index",
  "source",
  "settings",
  "mappings",
  "script",
  "delete_source",
  "unblock_source",
  "index_uuid",
]);

/** A migration file's JSON: the parsed value, and the text it was read from (for line numbers). */
export interface MigrationJson {
  readonly value: unknown;
  readonly text: string;
}

/**
 * Reads a JSON migration file: strict UTF-8, one JSON value, and nothing `JSON.parse` would read
 * as another value than the text says (see `jsonValueProblem`). Throws a
 * {@linkcode MigrationFileError} naming the file, and the line where it can.
 */
export function parseMigrationJson(path: string, bytes: Uint8Array): MigrationJson {
  let parsed: MigrationJson;
  try {
    parsed = parseJsonBytes(bytes);
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      throw new MigrationFileError(path, `is not valid JSON: ${error.message}`, { cause: error });
    }
    throw error;
  }
  const problem = jsonValueProblem(parsed.text, parsed.value);
  if (problem !== undefined) throw new MigrationFileError(path, problem);
  return parsed;
}

/**
 * Decides the request a migration file becomes (seed 4.4): {@linkcode parseMigrationJson}, then
 * {@linkcode planDocument}.
 *
 * @param path the file's path relative to its connection's folder
 * @param bytes the file's raw content
 */
export function planRequest(path: string, bytes: Uint8Array): SearchRequest {
  return planDocument(path, parseMigrationJson(path, bytes).value);
}

/**
 * Decides the request a parsed migration file becomes (seed 4.4), without any I/O: an explicit
 * envelope first, then the `-template` / `-policy` file name, then the content. Index and template
 * names are lowercased (the cluster takes no other); a name the cluster would still refuse is
 * refused here, before anything is sent. Throws a {@linkcode MigrationFileError} naming the file
 * for anything malformed, matching no rule, or naming what the cluster refuses.
 *
 * @param path the file's path relative to its connection's folder
 * @param doc the file's parsed content (placeholders replaced)
 */
export function planDocument(path: string, doc: unknown): SearchRequest {
  if (!isJsonObject(doc)) {
    throw new MigrationFileError(path, "must hold a JSON object");
  }
  const file = path.slice(path.lastIndexOf("/") + 1);
  // The folder takes the suffix in any case (X.JSON), so the name must not keep it.
  const stem = file.replace(/\.json$/i, "");
  const fail = (message: string): never => {
    throw new MigrationFileError(path, message);
  };

  if (Object.hasOwn(doc, "method") || Object.hasOwn(doc, "path")) return envelope(doc, fail);
  // Its names are in the file, not the file name: `products-v2` is written where it is read.
  if (stem.endsWith("-reindex")) return reindex(doc, fail);

  const name = stem.replace(SUFFIX, "");
  if (name === "" || name === "." || name === "..") {
    fail(`derives the name "${name}", which cannot name a template, policy or index`);
  }
  const placeholder = /\$\{[^}]*\}/.exec(name)?.[0];
  if (placeholder !== undefined) {
    fail(
      `derives the name "${name}", which names a placeholder in the file name, where none is ` +
        `replaced (only a file's content is): ${placeholder} would be part of the name; ` +
        "write the name in the file, as an envelope's path",
    );
  }
  if (stem.endsWith("-template")) return template(doc, name, fail);
  if (stem.endsWith("-policy")) return policy(doc, name, fail);
  if (Object.hasOwn(doc, "index_patterns")) return template(doc, name, fail);
  if (Object.hasOwn(doc, "policy")) return policy(doc, name, fail);
  if (INDEX_KEYS.some((k) => Object.hasOwn(doc, k))) return index(doc, name, fail);
  return fail(
    "matches no rule: expected an envelope (method, path), a template (index_patterns), " +
      "a policy (policy) or an index (settings, mappings, aliases)",
  );
}

function envelope(doc: JsonObject, fail: (m: string) => never): SearchRequest {
  for (const k of Object.keys(doc)) {
    if (!ENVELOPE_KEYS.has(k)) {
      fail(`envelope has an unknown key "${k}" (method, path, body, name, repeatable)`);
    }
  }
  const { method, path, body, name, repeatable } = doc;
  if (typeof method !== "string" || method === "") fail("envelope has no method");
  if (typeof path !== "string" || path === "") fail("envelope has no path");
  const m = (method as string).toUpperCase() as SearchMethod;
  if (!METHODS.has(m)) fail(`envelope method "${method}" is not one of ${[...METHODS].join(", ")}`);
  checkPath(path as string, fail);
  if (body !== undefined && !isJsonObject(body)) fail("envelope body must be a JSON object");
  if (name !== undefined && (typeof name !== "string" || name === "")) {
    fail("envelope name must be a non-empty string");
  }
  if (body !== undefined && (m === "GET" || m === "HEAD")) {
    fail(`a ${m} request cannot have a body`);
  }
  if (repeatable !== undefined && typeof repeatable !== "boolean") {
    fail("envelope repeatable must be true or false");
  }
  return {
    kind: "request",
    method: m,
    path: path as string,
    ...(body === undefined ? {} : { body: body as JsonObject }),
    ...(name === undefined ? {} : { name: name as string }),
    ...(RUN_ONCE.has(m) && repeatable !== true ? { runOnce: true as const } : {}),
  };
}

// The path must be a path on the configured host: one leading slash, no scheme or host, no dot
// segments or backslashes that a server or proxy could resolve elsewhere.
function checkPath(path: string, fail: (m: string) => never): void {
  if (!path.startsWith("/") || path.startsWith("//")) {
    fail(`envelope path "${path}" must start with a single "/" (no scheme or host)`);
  }
  // deno-lint-ignore no-control-regex -- control characters are exactly what is refused here
  if (/[\\\s\u0000-\u001f\u007f]/.test(path)) {
    fail(`envelope path "${path}" must not hold backslashes, spaces or control characters`);
  }
  if (path.includes("#")) fail(`envelope path "${path}" must not hold a fragment (#)`);
  const pathname = path.split("?", 1)[0];
  for (const segment of pathname.split("/")) {
    let decoded = segment;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      fail(`envelope path "${path}" has a malformed %-escape`);
    }
    if (decoded === "." || decoded === ".." || decoded.includes("/")) {
      fail(`envelope path "${path}" must not hold "." or ".." segments or encoded slashes`);
    }
  }
}

function template(doc: JsonObject, stem: string, fail: (m: string) => never): SearchRequest {
  const name = stem.toLowerCase();
  const problem = templateNameProblem(name);
  if (problem !== undefined) {
    fail(`derives the template name "${name}", which OpenSearch refuses: it ${problem}`);
  }
  const patterns = doc.index_patterns;
  if (patterns !== undefined) {
    const list = typeof patterns === "string" ? [patterns] : patterns;
    if (
      !Array.isArray(list) || list.length === 0 || !list.every((p) => typeof p === "string" && p)
    ) {
      fail("index_patterns must be a non-empty list of strings");
    }
  }
  const raw = INDEX_KEYS.filter((k) => Object.hasOwn(doc, k));
  let body: JsonObject;
  if (raw.length === 0) {
    if (patterns === undefined) {
      fail("is a template without index_patterns, settings, mappings or aliases");
    }
    body = doc; // rule 1: a full composable template, sent as it is
  } else {
    // Rule 2: a raw definition is wrapped; template-level keys stay on top.
    const inner: JsonObject = {};
    body = { index_patterns: [`${name}*`] };
    for (const [k, v] of Object.entries(doc)) {
      if ((INDEX_KEYS as readonly string[]).includes(k)) inner[k] = v;
      else if (TEMPLATE_KEYS.has(k)) body[k] = v;
      else if (k === "template") fail(`has both "template" and top-level ${raw.join(", ")}`);
      else fail(`has an unknown key "${k}" for an index template`);
    }
    body.template = inner;
  }
  return { kind: "template", method: "PUT", path: `/_index_template/${segment(name)}`, body, name };
}

function policy(doc: JsonObject, name: string, fail: (m: string) => never): SearchRequest {
  const problem = policyIdProblem(name);
  if (problem !== undefined) {
    fail(`derives the policy id "${name}", which OpenSearch refuses: it ${problem}`);
  }
  let body: JsonObject;
  if (Object.hasOwn(doc, "policy")) {
    if (!isJsonObject(doc.policy)) fail(`"policy" must be a JSON object`);
    body = doc;
  } else if (Object.hasOwn(doc, "states") || Object.hasOwn(doc, "phases")) {
    body = { policy: doc }; // a bare policy definition, ISM's or ILM's
  } else {
    return fail(`is a policy file without a "policy" object`);
  }
  return { kind: "policy", method: "PUT", path: policyApiOf(body.policy).path(name), body, name };
}

function index(doc: JsonObject, name: string, fail: (m: string) => never): SearchRequest {
  const lower = name.toLowerCase();
  const problem = indexNameProblem(lower);
  if (problem !== undefined) fail(`"${lower}" is not a valid index name: it ${problem}`);
  for (const k of Object.keys(doc)) {
    if (!(INDEX_KEYS as readonly string[]).includes(k)) {
      fail(`has an unknown key "${k}" for an index (settings, mappings, aliases)`);
    }
  }
  return { kind: "index", method: "PUT", path: `/${segment(lower)}`, body: doc, name: lower };
}

// A reindex moves documents and an alias: sent again after it changed, it would move them again,
// so it runs once, like a POST.
function reindex(doc: JsonObject, fail: (m: string) => never): SearchRequest {
  for (const k of Object.keys(doc)) {
    if (!REINDEX_KEYS.has(k)) {
      fail(`has an unknown key "${k}" for a reindex (${[...REINDEX_KEYS].join(", ")})`);
    }
  }
  const name = (key: string, required: boolean): string | undefined => {
    const value = doc[key];
    if (value === undefined && !required) return undefined;
    if (typeof value !== "string" || value === "") {
      return fail(`reindex needs "${key}": the name of ${REINDEX_NAMES[key]}`);
    }
    const problem = indexNameProblem(value);
    if (problem !== undefined) fail(`"${key}": "${value}" is not a valid name: it ${problem}`);
    return value;
  };
  const alias = name("alias", true)!;
  const index = name("index", true)!;
  const source = name("source", false);
  if (index === alias) {
    fail(`"index" and "alias" are both "${index}": an alias cannot name an index`);
  }
  if (source !== undefined && (source === index || source === alias)) {
    fail(`"source" is "${source}": it must be another index than "index", and not the alias`);
  }
  const body: JsonObject = {};
  for (const k of ["settings", "mappings"] as const) {
    if (doc[k] === undefined) continue;
    if (!isJsonObject(doc[k])) fail(`"${k}" must be a JSON object`);
    body[k] = doc[k];
  }
  const script = doc.script;
  if (script !== undefined && (!isJsonObject(script) || typeof script.source !== "string")) {
    fail(`"script" must be an object with a "source" string (and optionally "lang", "params")`);
  }
  const deleteSource = doc.delete_source ?? false;
  if (typeof deleteSource !== "boolean") fail(`"delete_source" must be true or false`);
  const unblockSource = doc.unblock_source === undefined ? false : doc.unblock_source;
  if (typeof unblockSource !== "boolean") fail(`"unblock_source" must be true or false`);
  if (deleteSource && unblockSource) {
    fail(
      `"delete_source" and "unblock_source" are both true: the source is deleted, so no block ` +
        `is left to lift (keep one)`,
    );
  }
  const indexUuid = doc.index_uuid;
  if (indexUuid !== undefined && (typeof indexUuid !== "string" || indexUuid === "")) {
    fail(`"index_uuid" must be the index.uuid of "${index}", a string`);
  }
  const spec: ReindexSpec = {
    alias,
    index,
    ...definedFields({ source }),
    ...(indexUuid === undefined ? {} : { indexUuid: indexUuid as string }),
    ...(script === undefined ? {} : { script: script as JsonObject }),
    deleteSource: deleteSource as boolean,
    unblockSource: unblockSource as boolean,
  };
  return {
    kind: "reindex",
    method: "POST",
    path: "/_reindex",
    body,
    name: index,
    runOnce: true,
    reindex: spec,
  };
}

const REINDEX_NAMES: Record<string, string> = {
  alias: "the alias that moves to the new index",
  index: "the new index",
  source: "the index to copy from (default: the alias's index)",
};

function segment(name: string): string {
  return encodeURIComponent(name);
}
