import { isJsonObject, type JsonObject } from "../../files/json_object.ts";
import { type Differences, diffJson, IN_FILE_ONLY, type Step, walk } from "./json_diff.ts";

/**
 * Drift rules for aliases (checked on an OpenSearch 2.19 node; docs/migrations-reference.md,
 * "Drift"): an alias's `routing` is the cluster's `index_routing` and `search_routing`. An index
 * is compared on the aliases its file names; one a rollover (or a hand) moved to another index
 * cannot be added back. A reindex file's alias must end on its new index, writing to it.
 */

/** An alias as the cluster returns it: `routing` is `index_routing` and `search_routing`. */
export function aliasForm(alias: unknown): unknown {
  if (!isJsonObject(alias) || !Object.hasOwn(alias, "routing")) return alias;
  const { routing, ...rest } = alias;
  return {
    ...rest,
    index_routing: Object.hasOwn(alias, "index_routing") ? alias.index_routing : routing,
    search_routing: Object.hasOwn(alias, "search_routing") ? alias.search_routing : routing,
  };
}

/** Each alias of an `aliases` object in {@linkcode aliasForm}. */
export function aliasesForm(aliases: unknown): unknown {
  if (!isJsonObject(aliases)) return aliases;
  return Object.fromEntries(Object.entries(aliases).map(([k, v]) => [k, aliasForm(v)]));
}

/** The aliases the file names that the live index lacks or holds otherwise. */
export function differingAliases(file: unknown, cluster: unknown): string[] {
  if (!isJsonObject(file)) return [];
  const live = isJsonObject(cluster) ? cluster : {};
  return Object.keys(file).filter((name) => {
    if (!Object.hasOwn(live, name)) return true;
    return diffJson(aliasForm(file[name]), aliasForm(live[name])).length > 0;
  });
}

/**
 * Adds to `out` how a live index's aliases differ from those its file names, under `aliases.`:
 * one the index lacks that `movedAliases` says other indices hold now cannot be added back.
 */
export function diffIndexAliases(
  file: JsonObject,
  cluster: unknown,
  movedAliases: Readonly<Record<string, readonly string[]>> | undefined,
  out: Differences,
): void {
  const live = isJsonObject(cluster) ? cluster : {};
  for (const [name, alias] of Object.entries(file)) {
    const step: Step = { key: name, parent: { key: "aliases" } };
    const movedTo = movedAliases?.[name];
    if (!Object.hasOwn(live, name) && movedTo !== undefined && movedTo.length > 0) {
      // Added back here, it would span two indices, and writes through it would fail.
      out.add(
        step,
        `now on ${movedTo.slice(0, 5).map((n) => JSON.stringify(n)).join(", ")}` +
          `${movedTo.length > 5 ? ` and ${movedTo.length - 5} more` : ""} (moved by a ` +
          "rollover or by hand): applying the file again would make it span two indices",
        false,
      );
    } else if (!Object.hasOwn(live, name)) {
      out.add(step, IN_FILE_ONLY, true);
    } else walk(aliasForm(alias), aliasForm(live[name]), step, { extras: "report" }, out);
  }
}

/** The indices an alias points at, from `GET /_alias/{alias}`, and which one takes writes. */
export function aliasMembers(
  alias: string,
  cluster: unknown,
): { readonly indices: string[]; readonly write?: string } {
  const indices: string[] = [];
  let write: string | undefined;
  // An alias on one index, not marked otherwise, writes to it.
  let onlyWrites = false;
  if (isJsonObject(cluster)) {
    for (const index of Object.keys(cluster)) {
      const entry = cluster[index];
      const aliases = isJsonObject(entry) ? entry.aliases : undefined;
      if (!isJsonObject(aliases) || !Object.hasOwn(aliases, alias)) continue;
      indices.push(index);
      const definition = aliases[alias];
      const flag = isJsonObject(definition) ? definition.is_write_index : undefined;
      if (flag === true) write = index;
      onlyWrites = flag !== false;
    }
  }
  if (write === undefined && indices.length === 1 && onlyWrites) write = indices[0];
  return { indices, ...(write === undefined ? {} : { write }) };
}

/**
 * Adds to `out` whether `alias` points at `index` as its write index (a reindex file's end state),
 * from `GET /_alias/{alias}` (`undefined`: the cluster has no such alias). Applying the file again
 * changes none of it.
 */
export function diffWriteAlias(
  alias: string,
  index: string,
  cluster: unknown,
  out: Differences,
): void {
  if (cluster === undefined) {
    out.add(undefined, "absent from the cluster", false);
    return;
  }
  const { indices, write } = aliasMembers(alias, cluster);
  if (indices.length === 0) out.add(undefined, "absent from the cluster", false);
  else if (!indices.includes(index)) {
    out.add(
      undefined,
      `points at ${out.show(indices.join(", "))}, not at "${index}" (the file's new index)`,
      false,
    );
  } else if (write !== index) {
    out.add(
      undefined,
      `writes to ${write === undefined ? "no index" : out.show(write)}, not to "${index}" ` +
        `(the file's new index)`,
      false,
    );
  }
}
