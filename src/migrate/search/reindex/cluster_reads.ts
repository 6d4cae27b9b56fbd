import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import type { ReindexSpec } from "../plan/search_request.ts";
import {
  type AliasMember,
  namesToCheck,
  type ReindexObservation,
  type ReindexProgress,
  sourceCandidate,
  type SourceFacts,
} from "./reindex_plan.ts";
import { type Send, StepError } from "./reindex_step.ts";
import { definedFields } from "../../../defined_fields.ts";

// What a reindex reads of the cluster: each function sends only reads, and keeps no state.

/** Reads what `decideReindex` needs, and the alias's definitions for the swap. */
export async function observe(
  send: Send,
  spec: ReindexSpec,
  hash: string,
  progressPath: string,
): Promise<ReindexObservation & { definitions: Map<string, JsonObject> }> {
  const progress = await readProgress(send, progressPath);
  const { members, definitions } = await aliasMembers(send, spec.alias);
  const found = new Set<string>();
  const uuids = new Map<string, string>();
  for (const name of namesToCheck(spec, progress)) {
    const head = await send("HEAD", `/${encodeURIComponent(name)}`, undefined, { ok: [404] });
    if (head.status !== 200) continue;
    found.add(name);
    if (name === spec.index || name === progress?.index) {
      const uuid = await indexUuid(send, name);
      if (uuid !== undefined) uuids.set(name, uuid);
    }
  }
  const candidate = sourceCandidate(spec, members);
  let source: SourceFacts | undefined;
  if (
    candidate !== undefined && (found.has(candidate) || members.some((m) => m.index === candidate))
  ) {
    source = await sourceFacts(send, candidate, spec.alias);
  }
  return {
    spec,
    hash,
    ...definedFields({ progress }),
    members,
    exists: (name) => found.has(name),
    uuid: (name) => uuids.get(name),
    ...definedFields({ source }),
    definitions,
  };
}

/** The progress document at `path`, if there is one: a malformed one fails the run. */
export async function readProgress(send: Send, path: string): Promise<ReindexProgress | undefined> {
  const response = await send("GET", path, undefined, { ok: [404] });
  const body = isJsonObject(response.body) ? response.body : {};
  if (response.status === 404 || body.found !== true || !isJsonObject(body._source)) {
    return undefined;
  }
  const p = body._source as JsonObject;
  if (
    typeof p.source !== "string" || typeof p.index !== "string" || typeof p.hash !== "string"
  ) {
    throw new StepError(
      `the progress document ${path} is malformed (no source, index or hash): delete it by hand`,
    );
  }
  const text = (key: string) => typeof p[key] === "string" ? { [key]: p[key] as string } : {};
  return {
    source: p.source,
    index: p.index,
    alias: typeof p.alias === "string" ? p.alias : "",
    hash: p.hash,
    ...text("uuid"),
    ...text("since"),
    ...text("blocked_at"),
    ...text("task"),
    ...(Array.isArray(p.copies)
      ? { copies: p.copies.filter((c): c is string => typeof c === "string") }
      : {}),
    started_at: typeof p.started_at === "string" ? p.started_at : "",
  };
}

/** The alias's indices, and its definition on each (filter, routing) without `is_write_index`. */
export async function aliasMembers(
  send: Send,
  alias: string,
): Promise<{ members: AliasMember[]; definitions: Map<string, JsonObject> }> {
  const response = await send("GET", `/_alias/${encodeURIComponent(alias)}`, undefined, {
    ok: [404],
  });
  const members: AliasMember[] = [];
  const definitions = new Map<string, JsonObject>();
  if (response.status === 404 || !isJsonObject(response.body)) return { members, definitions };
  for (const [index, value] of Object.entries(response.body)) {
    const aliases = isJsonObject(value) && isJsonObject(value.aliases) ? value.aliases : {};
    if (!Object.hasOwn(aliases, alias)) continue;
    const entry = isJsonObject(aliases[alias]) ? aliases[alias] as JsonObject : {};
    members.push({ index, write: entry.is_write_index === true });
    const kept: JsonObject = {};
    for (const key of ["filter", "index_routing", "search_routing", "is_hidden"]) {
      if (entry[key] !== undefined) kept[key] = entry[key];
    }
    definitions.set(index, kept);
  }
  return { members, definitions };
}

/** The `index.uuid` of `name`, when it is an index. */
export async function indexUuid(send: Send, name: string): Promise<string | undefined> {
  const response = await send(
    "GET",
    `/${encodeURIComponent(name)}/_settings/index.uuid?flat_settings=true`,
    undefined,
    { ok: [404] },
  );
  const body = isJsonObject(response.body) ? response.body : {};
  // Keyed by the concrete index: another key means the name is an alias.
  const entry = Object.hasOwn(body, name) && isJsonObject(body[name])
    ? body[name] as JsonObject
    : {};
  const settings = isJsonObject(entry.settings) ? entry.settings : {};
  return typeof settings["index.uuid"] === "string" ? settings["index.uuid"] : undefined;
}

/** Whether `name` is a concrete index, and whether its writes are blocked. */
export async function writeBlocked(
  send: Send,
  name: string,
): Promise<{ concrete: boolean; blocked: boolean }> {
  const settings = await send(
    "GET",
    // index.uuid is always there: the answer's key is then the concrete index behind the name.
    `/${encodeURIComponent(name)}/_settings/index.uuid,index.blocks.write?flat_settings=true`,
  );
  const body = isJsonObject(settings.body) ? settings.body : {};
  const concrete = Object.keys(body).length === 1 && Object.hasOwn(body, name);
  const entry = concrete && isJsonObject(body[name]) ? body[name] as JsonObject : {};
  const values = isJsonObject(entry.settings) ? entry.settings : {};
  return { concrete, blocked: values["index.blocks.write"] === "true" };
}

/** What the planner needs to know of the index a fresh reindex would copy from. */
export async function sourceFacts(send: Send, name: string, alias: string): Promise<SourceFacts> {
  const path = `/${encodeURIComponent(name)}`;
  const { concrete, blocked } = await writeBlocked(send, name);
  const aliases = await send("GET", `${path}/_alias`);
  const own = isJsonObject(aliases.body) && isJsonObject(aliases.body[name])
    ? aliases.body[name] as JsonObject
    : {};
  const names = isJsonObject(own.aliases) ? Object.keys(own.aliases) : [];
  return {
    concrete,
    blocked,
    otherAliases: names.filter((a) => a !== alias),
  };
}

/** The ids of the cluster's nodes, as the cluster manager's state lists them. */
export async function clusterNodes(send: Send): Promise<string[]> {
  const state = await send("GET", "/_cluster/state/nodes?filter_path=nodes.*.name");
  const body = isJsonObject(state.body) ? state.body : {};
  const nodes = isJsonObject(body.nodes) ? Object.keys(body.nodes) : [];
  if (nodes.length === 0) throw new StepError("the cluster state lists no node");
  return nodes;
}

// The documents `index` (a path: `/name`) holds, counted on every shard.
export async function documentCount(send: Send, index: string): Promise<number> {
  const response = await send("GET", `${index}/_count`);
  const answer = isJsonObject(response.body) ? response.body : {};
  const shards = isJsonObject(answer._shards) ? answer._shards : {};
  if (typeof shards.failed === "number" && shards.failed > 0) {
    throw new StepError(`_count of ${index.slice(1)} failed on ${shards.failed} shard(s)`);
  }
  if (typeof answer.count !== "number") throw new StepError("_count answered without a count");
  return answer.count;
}
