import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import type { FileReport } from "../../run_report.ts";
import type { IndexDefinition } from "./drift.ts";
import { flattenSettings } from "./settings_rules.ts";
import type { SearchFile, SearchPlannedFile } from "../search_file.ts";
import { isCodeFile, isCodePath } from "../../code/code_file.ts";
import type { AppliedFiles, FileRecord } from "../../driver.ts";
import { definedFields } from "../../../defined_fields.ts";

/**
 * One resource `--drift` compares with the cluster, and the file it is compared with. `codeAfter`
 * names the first applied code file that ran after that file: it may have changed the resource on
 * purpose, so the file is never applied again over it.
 */
export type DriftCheck = DriftTarget & { readonly codeAfter?: string };

/** What {@linkcode DriftCheck} compares. */
export type DriftTarget =
  | {
    readonly kind: "template";
    /** `template logs`: the report's name for it. */
    readonly resource: string;
    readonly file: SearchFile;
    readonly name: string;
    readonly body: unknown;
  }
  | {
    readonly kind: "policy";
    readonly resource: string;
    readonly file: SearchFile;
    readonly id: string;
    readonly body: unknown;
  }
  | {
    readonly kind: "index";
    readonly resource: string;
    readonly file: SearchFile;
    readonly name: string;
    /** The file's settings, mappings and aliases, with what later envelopes add merged in. */
    readonly definition: IndexDefinition;
  }
  | {
    /** The alias a reindex file moves: it must have the file's new index as write index. */
    readonly kind: "alias";
    readonly resource: string;
    readonly file: SearchFile;
    readonly alias: string;
    readonly index: string;
  };

/** What an applied envelope does to the resources of files before it. */
type Effect =
  /** Writes or deletes this template or policy itself: it is no longer the file's alone. */
  | { readonly kind: "replaces"; readonly resource: "template" | "policy"; readonly names: string }
  /** Deletes (`DELETE /{names}`) or creates (`PUT /{names}`) indices. */
  | { readonly kind: "replaces"; readonly resource: "index"; readonly names: string }
  /** `PUT /{names}/_mapping`: fields added to these indices. */
  | { readonly kind: "mappings"; readonly names: string; readonly body: JsonObject }
  /** `PUT /{names}/_settings`. */
  | { readonly kind: "settings"; readonly names: string; readonly body: JsonObject }
  /** `_aliases` or `/{index}/_alias/{names}`: these aliases are moved by hand-written requests. */
  | { readonly kind: "aliases"; readonly names: readonly string[] };

/**
 * The code files that ran, in run order (those no longer in the folder last, by path), each with
 * when: the time its record was written, `now` when it ran in this run, `undefined` when its
 * record does not say.
 */
function codeFilesRun(
  planned: readonly SearchPlannedFile[],
  reports: ReadonlyMap<string, FileReport>,
  records: ReadonlyMap<string, FileRecord>,
): { readonly path: string; readonly at?: number; readonly time: number | "now" | undefined }[] {
  const inFolder = planned.flatMap((f, at) => isCodeFile(f) ? [{ path: f.path, at }] : []);
  const known = new Set(planned.map((f) => f.path));
  const gone = [...records.keys()].filter((path) => isCodePath(path) && !known.has(path)).sort();
  return [...inFolder, ...gone.map((path) => ({ path }))].flatMap((c) => {
    const report = reports.get(c.path);
    const now = report !== undefined &&
      (report.action === "apply" || report.action === "reapply") &&
      report.result !== undefined && report.result !== "failed";
    if (!now && !records.has(c.path)) return [];
    return [{ ...c, time: now ? "now" as const : timeOf(records.get(c.path)) }];
  });
}

/** When a record was written, in ms; `undefined` when it does not say. */
function timeOf(record: FileRecord | undefined): number | undefined {
  const time = record?.executedAt === undefined ? NaN : Date.parse(record.executedAt);
  return Number.isNaN(time) ? undefined : time;
}

/** Whether the report says the file was applied: recorded before this run, or applied in it. */
function applied(report: FileReport | undefined): boolean {
  if (report === undefined) return false;
  if (["skip", "changed", "reapply", "rename"].includes(report.action)) {
    return report.result !== "failed";
  }
  return report.action === "apply" && report.result !== undefined && report.result !== "failed";
}

/**
 * The resources `--drift` compares, each with the file it is compared with (pure; the files in
 * run order, code files included, `decided` as the runner decided them):
 *
 * - Files of kind template, policy, index and reindex whose record matches (action `skip`); per
 *   resource only the last file in run order, and only when that one is such a file (a pending or
 *   changed last file is about to change the resource anyway).
 * - An index file whose `aliases` name an alias that a later applied reindex file moves is not
 *   checked, nor one a later applied reindex deletes (`delete_source`): its index may be gone.
 *   Only the last reindex file of an alias is checked: its new index, and that the alias has it as
 *   write index.
 * - Envelopes are not checked (their paths can address anything), but an applied envelope after a
 *   file adds to what the file's resource should be (`PUT /{index}/_mapping`, `/_settings`), or
 *   takes the resource out of the check (`DELETE /{index}`, `PUT /_index_template/{name}`, a
 *   policy write, `_aliases`: the aliases it names are not checked).
 * - Code files are not checked, and nothing says what they did: a file that a code file ran after
 *   is still compared, with the code file's name in `codeAfter`. A code file ran after a file when
 *   it sorts after it, was recorded after it (a late file), ran in this run, or is recorded but no
 *   longer in the folder (when it ran is then not known).
 */
export function driftChecks(
  planned: readonly SearchPlannedFile[],
  applied: AppliedFiles,
): DriftCheck[] {
  return new DriftScan(planned, applied).checks();
}

// A reindex applied, at its place in run order.
interface AppliedReindex {
  readonly at: number;
  readonly alias: string;
  readonly source?: string;
  readonly deleteSource: boolean;
}

// The keys of the resources a file defines: its template, policy or index, a reindex's new index
// and alias.
function keysOf(f: SearchFile): string[] {
  const r = f.searchRequest;
  if (r.kind === "reindex" && r.reindex !== undefined) {
    return [`index ${r.reindex.index}`, `alias ${r.reindex.alias}`];
  }
  if (r.kind === "template" || r.kind === "policy" || r.kind === "index") {
    return r.name === undefined ? [] : [`${r.kind} ${r.name}`];
  }
  return [];
}

// One pass of `driftChecks` over the files in run order (positions count code files too, so that
// the code files' and the files' places agree).
class DriftScan {
  readonly #reports: ReadonlyMap<string, FileReport>;
  readonly #records: ReadonlyMap<string, FileRecord>;
  readonly #files: readonly (SearchFile | undefined)[];
  readonly #codeRuns: ReturnType<typeof codeFilesRun>;
  // The place of the last file defining each resource key.
  readonly #last = new Map<string, number>();
  readonly #effects: { at: number; effect: Effect }[] = [];
  readonly #reindexes: AppliedReindex[] = [];
  readonly #checks: DriftCheck[] = [];

  constructor(planned: readonly SearchPlannedFile[], { decided, records }: AppliedFiles) {
    this.#reports = new Map(decided.map((d) => [d.path, d]));
    this.#records = records;
    this.#files = planned.map((f) => isCodeFile(f) ? undefined : f);
    this.#codeRuns = codeFilesRun(planned, this.#reports, records);
    this.#files.forEach((f, i) => f && keysOf(f).forEach((k) => this.#last.set(k, i)));
    this.#files.forEach((f, at) => {
      if (f === undefined || !applied(this.#reports.get(f.path))) return;
      const r = f.searchRequest;
      if (r.kind === "request") {
        for (const effect of envelopeEffects(r.method, r.path, r.body)) {
          this.#effects.push({ at, effect });
        }
      } else if (r.kind === "reindex" && r.reindex !== undefined) {
        this.#reindexes.push({ at, ...r.reindex });
      }
    });
  }

  /** What to compare, in run order. */
  checks(): DriftCheck[] {
    this.#files.forEach((file, at) => {
      if (file === undefined || this.#reports.get(file.path)?.action !== "skip") return;
      const r = file.searchRequest;
      if ((r.kind === "template" || r.kind === "policy") && r.name !== undefined) {
        this.#definition(file, at, r.kind, r.name, r.body);
      } else if (r.kind === "index" && r.name !== undefined) {
        this.#index(file, at, r.name, r.body ?? {});
      } else if (r.kind === "reindex" && r.reindex !== undefined) {
        this.#reindex(file, at, r.reindex, r.body ?? {});
      }
    });
    return this.#checks;
  }

  #check(at: number, file: SearchFile, target: DriftTarget): void {
    this.#checks.push({ ...target, ...this.#codeAfter(at, file) });
  }

  // The code file that ran after the file at `at`, if any: nothing says what it did.
  #codeAfter(at: number, file: SearchFile): { codeAfter?: string } {
    const recorded = timeOf(this.#records.get(file.path));
    const ran = this.#codeRuns.find((c) =>
      c.at === undefined || c.at > at || c.time === "now" ||
      (c.time !== undefined && recorded !== undefined && c.time >= recorded)
    );
    return ran === undefined ? {} : { codeAfter: ran.path };
  }

  #isLast(key: string, at: number): boolean {
    return this.#last.get(key) === at;
  }

  #after(at: number): Effect[] {
    return this.#effects.filter((e) => e.at > at).map((e) => e.effect);
  }

  #replaced(at: number, resource: "template" | "policy" | "index", name: string): boolean {
    return this.#after(at).some((e) =>
      e.kind === "replaces" && e.resource === resource && matches(e.names, name, [])
    );
  }

  // A template or a policy, where no later file defines or replaces it.
  #definition(
    file: SearchFile,
    at: number,
    kind: "template" | "policy",
    name: string,
    body: unknown,
  ): void {
    const resource = `${kind} ${name}`;
    if (!this.#isLast(resource, at) || this.#replaced(at, kind, name)) return;
    this.#check(
      at,
      file,
      kind === "template"
        ? { kind: "template", resource, file, name, body }
        : { kind: "policy", resource, file, id: name, body },
    );
  }

  // An index, where no later reindex moves its aliases or deletes it, nor a file replaces it.
  #index(file: SearchFile, at: number, name: string, body: JsonObject): void {
    const resource = `index ${name}`;
    const aliases = isJsonObject(body.aliases) ? Object.keys(body.aliases) : [];
    const moved = this.#reindexes.some((x) =>
      x.at > at && (aliases.includes(x.alias) || (x.deleteSource && x.source === name))
    );
    if (!this.#isLast(resource, at) || moved || this.#replaced(at, "index", name)) return;
    const definition = amend(body, name, aliases, this.#after(at));
    this.#check(at, file, { kind: "index", resource, file, name, definition });
  }

  // A reindex: its new index, and its alias pointing there.
  #reindex(
    file: SearchFile,
    at: number,
    { alias, index }: { alias: string; index: string },
    body: JsonObject,
  ): void {
    // A later reindex of the same alias may have deleted this one's index.
    if (this.#reindexes.some((x) => x.at > at && (x.alias === alias || x.source === index))) {
      return;
    }
    const resource = `index ${index}`;
    if (this.#isLast(resource, at) && !this.#replaced(at, "index", index)) {
      const definition = amend(body, index, [], this.#after(at));
      this.#check(at, file, { kind: "index", resource, file, name: index, definition });
    }
    const touched = this.#after(at).some((e) =>
      e.kind === "aliases" && e.names.some((n) => matches(n, alias, []))
    );
    if (this.#isLast(`alias ${alias}`, at) && !touched) {
      this.#check(at, file, { kind: "alias", resource: `alias ${alias}`, file, alias, index });
    }
  }
}

// The file's definition of an index, with the mappings and settings later envelopes send to it,
// and without the aliases later envelopes move.
function amend(
  body: Readonly<JsonObject>,
  name: string,
  aliases: readonly string[],
  effects: readonly Effect[],
): IndexDefinition {
  let mappings: unknown = body.mappings;
  let settings: Map<string, unknown> | undefined = body.settings === undefined
    ? undefined
    : flattenSettings(body.settings);
  let fileAliases: unknown = body.aliases;
  for (const e of effects) {
    if (e.kind === "mappings" && matches(e.names, name, aliases)) {
      mappings = merge(mappings ?? {}, e.body);
    } else if (e.kind === "settings" && matches(e.names, name, aliases)) {
      const inner = isJsonObject(e.body.settings) ? e.body.settings : e.body;
      settings = new Map([...settings ?? [], ...flattenSettings(inner)]);
    } else if (e.kind === "aliases" && isJsonObject(fileAliases)) {
      const kept = Object.entries(fileAliases).filter(([alias]) =>
        !e.names.some((n) => matches(n, alias, []))
      );
      fileAliases = Object.fromEntries(kept);
    }
  }
  return {
    ...(settings === undefined ? {} : { settings: Object.fromEntries(settings) }),
    ...definedFields({ mappings, aliases: fileAliases }),
  };
}

// Objects merge key by key (what `PUT _mapping` does with fields); anything else is replaced.
function merge(base: unknown, patch: unknown): unknown {
  if (!isJsonObject(base) || !isJsonObject(patch)) return patch;
  const entries = new Map<string, unknown>(Object.entries(base));
  for (const [k, v] of Object.entries(patch)) {
    entries.set(k, entries.has(k) ? merge(entries.get(k), v) : v);
  }
  return Object.fromEntries(entries);
}

/**
 * Whether an index expression of a request path (`logs,orders`, `logs-*`, `_all`) names `name`,
 * directly or through one of `aliases`. Exclusions (`-x`) and date math are not resolved: they
 * match nothing.
 */
export function matches(expression: string, name: string, aliases: readonly string[]): boolean {
  return expression.split(",").some((item) => {
    if (item === "" || item.startsWith("-") || item.startsWith("<")) return false;
    if (item === "_all") return true;
    return glob(item, name) || aliases.some((a) => glob(item, a));
  });
}

// `*` matches any run of characters; nothing else is special. Linear backtracking on the last
// star only, so no pattern takes more than length × length steps.
function glob(pattern: string, text: string): boolean {
  let p = 0, t = 0, star = -1, mark = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== "*" && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

/** What an applied envelope does to the resources `--drift` checks (see {@linkcode Effect}). */
export function envelopeEffects(method: string, path: string, body: unknown): Effect[] {
  const parts = path.split("?", 1)[0].split("/").slice(1);
  // `/users/` is `/users`.
  if (parts.length > 1 && parts.at(-1) === "") parts.pop();
  const segments = parts.map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  const [first = "", second, third, fourth] = segments;
  const writes = method === "PUT" || method === "POST" || method === "DELETE" ||
    method === "PATCH";
  const json = isJsonObject(body) ? body : {};
  if (!writes) return [];
  if (first === "_index_template" && second !== undefined) {
    return [{ kind: "replaces", resource: "template", names: second }];
  }
  if (first === "_plugins" && second === "_ism" && third === "policies" && fourth !== undefined) {
    return [{ kind: "replaces", resource: "policy", names: fourth }];
  }
  if (first === "_ilm" && second === "policy" && third !== undefined) {
    return [{ kind: "replaces", resource: "policy", names: third }];
  }
  if (first === "_aliases") return [{ kind: "aliases", names: aliasNames(json) }];
  if (first === "_mapping" || first === "_mappings") {
    return [{ kind: "mappings", names: "_all", body: json }];
  }
  if (first === "_settings") return [{ kind: "settings", names: "_all", body: json }];
  if (first === "" || first.startsWith("_")) return [];
  if (second === undefined) {
    return method === "DELETE" || method === "PUT"
      ? [{ kind: "replaces", resource: "index", names: first }]
      : [];
  }
  if ((second === "_mapping" || second === "_mappings") && method !== "DELETE") {
    return [{ kind: "mappings", names: first, body: json }];
  }
  if (second === "_settings" && method !== "DELETE") {
    return [{ kind: "settings", names: first, body: json }];
  }
  if (second === "_alias" || second === "_aliases") {
    return [{ kind: "aliases", names: third === undefined ? aliasNames(json) : third.split(",") }];
  }
  return [];
}

// The aliases an `_aliases` body (or an alias body) names; `*` when it names them otherwise.
function aliasNames(body: JsonObject): string[] {
  const names: string[] = [];
  const take = (x: unknown) => {
    if (typeof x === "string") names.push(x);
    else if (Array.isArray(x)) { for (const n of x) if (typeof n === "string") names.push(n); }
  };
  take(body.alias);
  take(body.aliases);
  if (Array.isArray(body.actions)) {
    for (const action of body.actions) {
      if (!isJsonObject(action)) continue;
      for (const inner of Object.values(action)) {
        if (isJsonObject(inner)) {
          take(inner.alias);
          take(inner.aliases);
        }
      }
    }
  }
  return names.length === 0 ? ["*"] : names;
}
