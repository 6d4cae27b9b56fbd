import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { MigrationFailure } from "../../migration_error.ts";
import type { ConnectionDrift, DriftReport } from "../../run_report.ts";
import { applyRequest } from "../apply_request.ts";
import { compareIndex, comparePolicy, compareTemplate, compareWriteAlias } from "./drift.ts";
import type { Difference } from "./json_diff.ts";
import { differingAliases } from "./alias_rules.ts";
import { differingMappingParts } from "./mapping_rules.ts";
import { differingSettings, flattenSettings, isStaticSetting } from "./settings_rules.ts";
import { renderValue } from "../render_value.ts";
import { policyApiOf } from "../plan/policy_api.ts";
import type { DriftCheck } from "./drift_plan.ts";
import { errorDetail, type SearchClient, type SearchResponse } from "../http/search_client.ts";
import type { SearchFile } from "../search_file.ts";
import { type Mask, noMask } from "../../../config/secrets_mask.ts";
import { definedFields } from "../../../defined_fields.ts";

/** What the cluster holds under a checked resource's name. */
export type Live =
  | { readonly state: "absent" }
  | {
    readonly state: "found";
    readonly body: unknown;
    /** An index's: aliases its file names that it lacks, and the indices that hold them now. */
    readonly movedAliases?: Readonly<Record<string, readonly string[]>>;
  }
  /** An index name that now resolves to something else: an alias, a data stream. */
  | { readonly state: "other"; readonly what: string };

const enc = encodeURIComponent;
const policyOf = (body: unknown) => isJsonObject(body) ? body.policy : undefined;
const ok = (r: SearchResponse) => r.status >= 200 && r.status < 300;

/**
 * Reads what the cluster holds for `check` (one GET): 404 is absent; any other answer than 200
 * (403 for a user who may not read it, 503, a cluster without the policy's ISM or ILM) stops the run with a
 * failure naming the resource, since nothing can be said about it; its request and reason through
 * `mask` (a resource's name may hold a placeholder's value).
 */
export async function readLive(
  client: SearchClient,
  check: DriftCheck,
  connection: string,
  signal?: AbortSignal,
  mask: Mask = noMask,
): Promise<Live> {
  try {
    return await readUnmasked(client, check, connection, signal);
  } catch (error) {
    if (!(error instanceof MigrationFailure) || mask === noMask) throw error;
    const { detail } = error;
    throw new MigrationFailure({
      ...detail,
      reason: mask(detail.reason),
      ...(detail.request === undefined ? {} : { request: mask(detail.request) }),
    }, { cause: error.cause });
  }
}

async function readUnmasked(
  client: SearchClient,
  check: DriftCheck,
  connection: string,
  signal: AbortSignal | undefined,
): Promise<Live> {
  const path = check.kind === "template"
    ? `/_index_template/${enc(check.name)}`
    : check.kind === "policy"
    ? policyApiOf(policyOf(check.body)).path(check.id)
    : check.kind === "index"
    ? `/${enc(check.name)}`
    : `/_alias/${enc(check.alias)}`;
  const response = await client.send("GET", path, undefined, { signal });
  const fail = (reason: string): never => {
    throw new MigrationFailure({
      connection,
      file: check.file.path,
      request: `GET ${path}`,
      status: response.status,
      reason: `the drift check cannot read ${check.resource}: ${reason}`,
    });
  };
  if (response.status === 404) return { state: "absent" };
  if (response.status !== 200) return fail(errorDetail(response.body));
  const body = response.body;
  if (!isJsonObject(body)) return fail(`unexpected answer ${renderValue(body)}`);
  switch (check.kind) {
    case "template": {
      const list = body.index_templates;
      if (!Array.isArray(list)) return fail(`unexpected answer ${renderValue(body)}`);
      const entry = list.find((t) => isJsonObject(t) && t.name === check.name);
      return entry === undefined
        ? { state: "absent" }
        : { state: "found", body: entry.index_template };
    }
    case "index": {
      if (Object.hasOwn(body, check.name) && isJsonObject(body[check.name])) {
        const index = body[check.name] as JsonObject;
        const movedAliases = await aliasesElsewhere(
          client,
          check,
          index.aliases,
          connection,
          signal,
        );
        return { state: "found", body: index, ...(movedAliases ? { movedAliases } : {}) };
      }
      // GET /{name} resolves an alias or a data stream to the indices behind it.
      const names = Object.keys(body);
      if (names.length === 0) return { state: "absent" };
      const stream = names.some((n) => {
        const entry = body[n];
        return n.startsWith(".ds-") || (isJsonObject(entry) && entry.data_stream !== undefined);
      });
      return {
        state: "other",
        what: stream
          ? "a data stream"
          : `an alias of ${renderValue(names.slice(0, 10).join(", "))}${
            names.length > 10 ? ` and ${names.length - 10} more` : ""
          }`,
      };
    }
    case "policy":
      return { state: "found", body: policyApiOf(policyOf(check.body)).live(body, check.id) };
    default:
      return { state: "found", body };
  }
}

/**
 * The aliases an index file names that the live index lacks and another index holds as its write
 * path, each with the indices that hold it (one `GET /_alias/{name}` each); `undefined` when there
 * is none. A rollover moves a write alias on: added back, it would span two indices and writes
 * through it would fail. A read alias shared by several indices, none of them its write index,
 * can be added back. A read that fails (a 403, a 503) stops the run, as every drift read does:
 * the alias cannot be said to be free.
 */
async function aliasesElsewhere(
  client: SearchClient,
  check: Extract<DriftCheck, { kind: "index" }>,
  live: unknown,
  connection: string,
  signal: AbortSignal | undefined,
): Promise<Record<string, string[]> | undefined> {
  const wanted = isJsonObject(check.definition.aliases) ? check.definition.aliases : {};
  const held = isJsonObject(live) ? live : {};
  const moved: Record<string, string[]> = {};
  for (const alias of Object.keys(wanted).filter((a) => !Object.hasOwn(held, a))) {
    const path = `/_alias/${enc(alias)}`;
    const response = await client.send("GET", path, undefined, { signal });
    if (response.status === 404) continue;
    if (response.status !== 200 || !isJsonObject(response.body)) {
      throw new MigrationFailure({
        connection,
        file: check.file.path,
        request: `GET ${path}`,
        status: response.status,
        reason:
          `the drift check cannot read where the alias ${alias} of ${check.resource} lives: ` +
          (response.status === 200
            ? `unexpected answer ${renderValue(response.body)}`
            : errorDetail(response.body)),
      });
    }
    const holders = Object.entries(response.body).filter(([n]) => n !== check.name);
    const isWrite = (entry: unknown): boolean => {
      const aliases = isJsonObject(entry) && isJsonObject(entry.aliases) ? entry.aliases : {};
      const definition = aliases[alias];
      return isJsonObject(definition) && definition.is_write_index === true;
    };
    const fileWrites = isJsonObject(wanted[alias]) && wanted[alias].is_write_index === true;
    const writePath = fileWrites || holders.length === 1 || holders.some(([, e]) => isWrite(e));
    if (holders.length > 0 && writePath) moved[alias] = holders.map(([n]) => n).sort();
  }
  return Object.keys(moved).length > 0 ? moved : undefined;
}

const EMPTY_AGAIN = "(its file would create it again empty, without its documents: restore it " +
  "from a snapshot, or create it by hand)";

/** How the live resource differs from its file; `redact` masks what the lines quote. */
export function differences(
  check: DriftCheck,
  live: Live,
  redact: Mask = noMask,
): Difference[] {
  if (check.kind === "alias") {
    const body = live.state === "found" ? live.body : undefined;
    return compareWriteAlias(check.alias, check.index, body, redact);
  }
  if (live.state === "absent") {
    // A template or a policy is its file; an index is also its documents, which no file holds.
    return check.kind === "index"
      ? [{ path: "", text: `absent from the cluster ${EMPTY_AGAIN}`, fixable: false }]
      : [{ path: "", text: "absent from the cluster", fixable: true }];
  }
  if (live.state === "other") {
    return [{ path: "", text: `is no longer an index: the name is ${live.what}`, fixable: false }];
  }
  if (check.kind === "template") return compareTemplate(check.body, live.body, redact);
  if (check.kind === "policy") return comparePolicy(check.body, live.body, redact);
  const body = isJsonObject(live.body) ? live.body : {};
  return compareIndex(check.definition, {
    settings: body.settings,
    mappings: body.mappings,
    aliases: body.aliases,
    ...definedFields({ movedAliases: live.movedAliases }),
  }, redact);
}

function driftReport(
  check: DriftCheck,
  found: readonly Difference[],
  mask: (text: string) => string,
): DriftReport {
  const fixable = found.some((d) => d.fixable);
  const note = check.codeAfter !== undefined
    ? `${check.codeAfter} ran after ${check.file.path}, and may have changed this on purpose ` +
      `(put a change in a new file)`
    : check.file.runOnce
    ? `${check.file.path} runs once (put the change in a new file)`
    : fixable
    ? undefined
    : "applying the file again cannot change this";
  return {
    // A reindex file's index and alias are named in its body, placeholders replaced.
    resource: mask(check.resource),
    file: check.file.path,
    differences: found.map((d) => mask(d.text)),
    reapply: check.codeAfter === undefined && !check.file.runOnce && fixable,
    ...definedFields({ note }),
  };
}

/**
 * `--drift`: reads each checked resource and compares it with its file. Sends only reads, one per
 * resource.
 */
export async function readDrift(
  client: SearchClient,
  checks: readonly DriftCheck[],
  connection: string,
  mask: Mask = noMask,
): Promise<ConnectionDrift> {
  const resources: DriftReport[] = [];
  for (const check of checks) {
    const found = differences(
      check,
      await readLive(client, check, connection, undefined, mask),
      mask,
    );
    if (found.length > 0) resources.push(driftReport(check, found, mask));
  }
  return { checked: checks.length, resources };
}

/** What {@linkcode repairDrift} needs of its caller. */
export interface RepairContext {
  readonly connection: string;
  /** Aborts the request in flight (the lock was lost). */
  readonly signal?: AbortSignal;
  /** Masks what a line quotes that must not be printed (placeholder values, passwords). */
  readonly mask?: (text: string) => string;
  /** Rewrites the file's record at its checksum (under the lock). */
  readonly record: (file: SearchFile) => Promise<void>;
  /** Throws when the run must stop before the next resource (Ctrl-C). */
  readonly stopping?: (file: SearchFile) => void;
}

/**
 * `migrate --drift`, under the lock: applies again the files of the resources in `found` marked
 * `reapply` (templates: PUT; policies: the ISM upsert; indices: the differing mappings and dynamic
 * settings, the missing aliases; never a gone index, which it would make empty), rewrites each file's record
 * at its checksum once the cluster took something, then reads each resource again: what still
 * differs goes to `remaining`, with the cluster's refusals.
 */
export async function repairDrift(
  client: SearchClient,
  checks: readonly DriftCheck[],
  found: ConnectionDrift,
  context: RepairContext,
): Promise<ConnectionDrift> {
  const mask = context.mask ?? noMask;
  // By the name the report shows (masked), with the file: two names masked alike are two files.
  const key = (resource: string, file: string) => JSON.stringify([resource, file]);
  const byResource = new Map(checks.map((c) => [key(mask(c.resource), c.file.path), c]));
  const recorded = new Set<string>();
  const resources: DriftReport[] = [];
  for (const report of found.resources) {
    const check = byResource.get(key(report.resource, report.file));
    if (!report.reapply || check === undefined) {
      resources.push(report);
      continue;
    }
    context.stopping?.(check.file);
    const live = await readLive(client, check, context.connection, context.signal, mask);
    const outcome = await reapply(client, check, live, context);
    if (outcome.accepted && !recorded.has(check.file.path)) {
      await context.record(check.file);
      recorded.add(check.file.path);
    }
    const after = differences(
      check,
      await readLive(client, check, context.connection, context.signal, mask),
      mask,
    );
    resources.push({
      ...report,
      result: outcome.accepted ? "reapplied" : "refused",
      remaining: [...after.map((d) => d.text), ...outcome.refusals].map(mask),
    });
  }
  return { checked: found.checked, resources };
}

interface Outcome {
  /** The cluster took at least one request. */
  accepted: boolean;
  /** What it refused, and why. */
  readonly refusals: string[];
}

async function reapply(
  client: SearchClient,
  check: DriftCheck,
  live: Live,
  context: RepairContext,
): Promise<Outcome> {
  const outcome: Outcome = { accepted: false, refusals: [] };
  const { signal } = context;
  const send = async (method: string, path: string, body: unknown, repeatable = false) => {
    const response = await client.send(method, path, body, { repeatable, signal });
    if (ok(response)) outcome.accepted = true;
    return response;
  };
  const refused = (request: string, r: SearchResponse) =>
    `${request} refused: HTTP ${r.status} ${errorDetail(r.body)}`;
  switch (check.kind) {
    case "template": {
      const { path, body } = check.file.searchRequest;
      // The same body replaces the same template: safe to send to another host.
      const r = await send("PUT", path, body, true);
      if (!ok(r)) outcome.refusals.push(refused(`PUT ${path}`, r));
      return outcome;
    }
    case "policy": {
      try {
        await applyRequest(client, check.file.searchRequest, {
          connection: context.connection,
          file: check.file.path,
        }, signal);
        outcome.accepted = true;
      } catch (error) {
        if (!(error instanceof MigrationFailure)) throw error;
        outcome.refusals.push(
          `${error.detail.request ?? "the policy upsert"} refused: ${
            error.detail.status === undefined ? "" : `HTTP ${error.detail.status} `
          }${error.detail.reason}`,
        );
      }
      return outcome;
    }
    case "index":
      // Gone since it was read: never made again empty (the report read after says it is absent).
      if (live.state === "found") {
        const body = isJsonObject(live.body) ? live.body : {};
        await reapplyIndex(check, body, live.movedAliases ?? {}, send, outcome, refused);
      }
      return outcome;
    default:
      return outcome; // a reindex's alias: its file runs once
  }
}

async function reapplyIndex(
  check: Extract<DriftCheck, { kind: "index" }>,
  live: JsonObject,
  moved: Readonly<Record<string, readonly string[]>>,
  send: (method: string, path: string, body: unknown) => Promise<SearchResponse>,
  outcome: Outcome,
  refused: (request: string, r: SearchResponse) => string,
): Promise<void> {
  const { definition } = check;
  const index = enc(check.name);
  // Settings: only the dynamic ones can change on a live index.
  const wanted = flattenSettings(definition.settings);
  let keys = differingSettings(definition.settings, live.settings).filter((k) =>
    !isStaticSetting(k)
  );
  for (let attempt = 0; keys.length > 0 && attempt < 2; attempt++) {
    const path = `/${index}/_settings`;
    const r = await send("PUT", path, Object.fromEntries(keys.map((k) => [k, wanted.get(k)])));
    if (ok(r)) break;
    // "Can't update non dynamic settings [[index.codec, index.sort.field]] for open indices"
    const reason = errorDetail(r.body);
    const named = /non dynamic settings \[\[([^\]]*)\]\]/.exec(reason)?.[1]?.split(", ") ?? [];
    const refusedKeys = keys.filter((k) => named.includes(k));
    if (refusedKeys.length === 0 || attempt === 1) {
      outcome.refusals.push(refused(`PUT ${path}`, r));
      break;
    }
    for (const k of refusedKeys) {
      outcome.refusals.push(
        `settings.${k}: the cluster cannot change it on a live index (a static setting; needs a ` +
          `reindex migration)`,
      );
    }
    keys = keys.filter((k) => !refusedKeys.includes(k));
  }
  // Mappings: what differs, together; one part at a time when the whole is refused.
  const parts = differingMappingParts(definition.mappings, live.mappings);
  if (parts.length > 0) {
    const path = `/${index}/_mapping`;
    const all = await send("PUT", path, parts.reduce(mergeParts, {}));
    if (!ok(all)) {
      for (const part of parts.length === 1 ? [] : parts) {
        const r = await send("PUT", path, part);
        if (!ok(r)) outcome.refusals.push(refused(`PUT ${path} ${partName(part)}`, r));
      }
      if (parts.length === 1) {
        outcome.refusals.push(refused(`PUT ${path} ${partName(parts[0])}`, all));
      }
    }
  }
  // Aliases the file names that the index lacks, or holds otherwise.
  const aliases = isJsonObject(definition.aliases) ? definition.aliases : {};
  // Never one that another index holds now: the alias would span two indices.
  const names = differingAliases(aliases, live.aliases).filter((a) => !Object.hasOwn(moved, a));
  if (names.length > 0) {
    const actions = names.map((alias) => ({
      add: { ...(isJsonObject(aliases[alias]) ? aliases[alias] : {}), index: check.name, alias },
    }));
    const r = await send("POST", "/_aliases", { actions });
    if (!ok(r)) outcome.refusals.push(refused("POST /_aliases", r));
  }
}

// `{"properties": {"a": ...}}` and `{"properties": {"b": ...}}` make one body.
function mergeParts(body: JsonObject, part: JsonObject): JsonObject {
  const props = isJsonObject(part.properties) ? part.properties : undefined;
  if (props === undefined) return { ...body, ...part };
  const before = isJsonObject(body.properties) ? body.properties : {};
  return { ...body, properties: { ...before, ...props } };
}

function partName(part: JsonObject): string {
  const props = isJsonObject(part.properties) ? Object.keys(part.properties) : [];
  return props.length > 0 ? `(field ${props[0]})` : `(${Object.keys(part)[0]})`;
}
