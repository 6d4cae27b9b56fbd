import { isJsonObject } from "../../files/json_object.ts";
import { errorDetail, type SearchResponse, SearchTransportError } from "../http/search_client.ts";
import { renderValue } from "../render_value.ts";
import { type Send, StepError } from "./reindex_step.ts";

/** A copy into the new index may still be going: the alias must not move onto it. */
export class CopyNotProven extends StepError {
  constructor(message: string, options?: ErrorOptions) {
    super(message);
    this.name = "CopyNotProven";
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** How {@linkcode stopCopies} stops copies, and what it knows of them. */
export interface StopCopies {
  /** The copy the run follows: neither stopped nor asked about. */
  readonly keep?: string;
  /** Every copy noted so far: those found running are added, those proven ended removed. */
  readonly recorded: Set<string>;
  /** Keeps `recorded` once copies were added to it, before they are cancelled. */
  readonly remember?: () => Promise<void>;
  /** How long the cluster waits for one node's answer. */
  readonly waitMs: number;
  /** The cluster is Elasticsearch 7, whose task descriptions name the type after the index. */
  readonly typed: boolean;
  /** Throws {@linkcode CopyNotProven} instead of returning why. */
  readonly strict?: boolean;
}

/** What {@linkcode stopCopies} found. */
export interface Stopped {
  /** The nodes that answered the list that proved every copy ended (none when it did not). */
  readonly members: readonly string[];
  /** Why a copy is left, or the error that stopped the proof; undefined when none is. */
  readonly unproven?: string;
}

/**
 * Cancels every running `_reindex` into `index` but `keep`, and proves that every copy in
 * `recorded` ended. Only listed copies whose description names `index` are cancelled: a noted
 * task id may belong to another task after a node restart. A node that does not answer the list,
 * or that the list did not reach while a copy noted there is not known to have ended, leaves a
 * copy unproven.
 */
export async function stopCopies(
  send: Send,
  index: string,
  options: StopCopies,
): Promise<Stopped> {
  const wait = `timeout=${options.waitMs}ms`;
  try {
    const first = await listCopies(send, index, options.keep, wait, options.typed);
    const found = first.ids.filter((id) => !options.recorded.has(id));
    if (found.length > 0) {
      for (const id of found) options.recorded.add(id);
      await options.remember?.();
    }
    for (const id of first.ids) {
      // The cancel takes no timeout of its own: a node that hangs now holds it for the request's.
      await send("POST", `/_tasks/${encodeURIComponent(id)}/_cancel?wait_for_completion=true`);
    }
    const second = await listCopies(send, index, options.keep, wait, options.typed);
    if (second.ids.length > 0) {
      throw new CopyNotProven(
        `a copy into ${index} could not be stopped (task ${second.ids.join(", ")})`,
      );
    }
    if (second.silent.length > 0) {
      throw new CopyNotProven(
        `a copy into ${index} is not proven stopped: ${second.silent.join("; ")}`,
      );
    }
    for (const id of [...options.recorded]) {
      if (id === options.keep) continue;
      if (id.startsWith("?")) {
        // A start with no answer: every node that could have taken it answered the list, and
        // none copies into the index. One the list did not reach may still run it.
        const nodes = id.slice(1).split("+").filter((n) => n !== "");
        const away = nodes.length === 0
          ? ["(none noted)"]
          : nodes.filter((n) => !second.answered.includes(n));
        if (away.length > 0) {
          throw new CopyNotProven(
            `a copy into ${index} whose start got no answer is not proven stopped: it may run ` +
              `on node ${away.join(", ")}, which the list of copies did not reach (not in the ` +
              "cluster now, as the node that listed them sees it)",
          );
        }
        options.recorded.delete(id);
        continue;
      }
      const why = await copyLeft(send, index, id, wait, options.typed);
      if (why !== undefined) {
        throw new CopyNotProven(`a copy into ${index} (task ${id}) is not proven stopped: ${why}`);
      }
      options.recorded.delete(id);
    }
    return { members: second.answered };
  } catch (error) {
    if (options.strict) {
      // An HTTP refusal says what it is; Ctrl-C or a lost lock is not about the copies.
      if (!(error instanceof SearchTransportError)) throw error;
      throw new CopyNotProven(
        `a copy into ${index} is not proven stopped: ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error },
      );
    }
    const left = error instanceof CopyNotProven
      ? error.message
      : [...options.recorded].some((id) => id !== options.keep)
      ? `a copy into ${index} (task ${[...options.recorded].join(", ")}) is not proven stopped`
      : undefined;
    return { members: [], ...(left === undefined ? {} : { unproven: left }) };
  }
}

/**
 * Whether a `_reindex` task's `description` names `index` as its destination: `... to [index]` on
 * OpenSearch, `... to [index][_doc]` on Elasticsearch 7 (`typed`), which adds the mapping type.
 * Missing a copy here would leave it running and, in {@linkcode stopCopies}, prove it ended; the
 * type is read only where the cluster writes one, since an index may be named `foo][bar`.
 */
export function copiesInto(description: unknown, index: string, typed: boolean): boolean {
  if (typeof description !== "string") return false;
  const suffix = ` to [${index}]`;
  return description.endsWith(suffix) ||
    (typed && description.replace(/\[[^[\]]*\]$/, "").endsWith(suffix));
}

/**
 * The copies into `index` running now but `keep`, the nodes that answered the list, and what may
 * hide a copy from it (a node that did not answer, a task that could not be listed).
 */
async function listCopies(
  send: Send,
  index: string,
  keep: string | undefined,
  wait: string,
  typed: boolean,
): Promise<{ ids: string[]; silent: string[]; answered: string[] }> {
  // Each node the list reaches runs a task of it (`lists[n]`) while it answers: listed with the
  // copies, it names every node that answered, so a node left out is seen, not taken for one
  // that runs no copy. The members the cluster state names would not do: a node leaving is
  // applied node by node, and the node coordinating the list may have dropped it already.
  const listed = await send(
    "GET",
    `/_tasks?actions=*reindex,cluster:monitor/tasks/lists*&detailed=true&group_by=nodes&${wait}`,
  );
  const body = isJsonObject(listed.body) ? listed.body : {};
  const nodes = isJsonObject(body.nodes) ? body.nodes : {};
  const ids: string[] = [];
  const answered: string[] = [];
  for (const [node, listing] of Object.entries(nodes)) {
    const tasks = isJsonObject(listing) && isJsonObject(listing.tasks) ? listing.tasks : {};
    for (const [id, info] of Object.entries(tasks)) {
      const task = isJsonObject(info) ? info : {};
      if (task.action === "cluster:monitor/tasks/lists[n]") answered.push(node);
      if (id !== keep && copiesInto(task.description, index, typed)) ids.push(id);
    }
  }
  // A node that did not answer may run a copy into the index, noted or not.
  const failures = Array.isArray(body.node_failures) ? body.node_failures : [];
  const silent = failures.map((f) =>
    `node ${
      isJsonObject(f) && typeof f.node_id === "string" ? f.node_id : "(unnamed)"
    } did not answer the task list (${errorDetail({ error: f })})`
  );
  // Not the cluster's list: no node answered, and none failed to.
  if (answered.length === 0 && failures.length === 0) {
    throw new StepError(
      `the task list names no node (a proxy's or a login page's answer?): ${
        renderValue(listed.body, 200)
      }`,
    );
  }
  // A task a node could not describe may be a copy.
  const unlisted = Array.isArray(body.task_failures) ? body.task_failures : [];
  for (const f of unlisted) {
    silent.push(`a task could not be listed (${errorDetail({ error: f })})`);
  }
  return { ids, silent, answered };
}

/** Why the copy noted as task `id` may still be going, or undefined when it ended. */
async function copyLeft(
  send: Send,
  index: string,
  id: string,
  wait: string,
  typed: boolean,
): Promise<string | undefined> {
  const node = id.split(":", 1)[0];
  let response: SearchResponse | undefined;
  // A node that just came back may drop the first connection the others open to it.
  for (let attempt = 1; response === undefined; attempt++) {
    try {
      response = await send("GET", `/_tasks/${encodeURIComponent(id)}?${wait}`, undefined, {
        ok: [404],
      });
    } catch (error) {
      if (attempt === 3) {
        return `node ${node} did not answer (${error instanceof Error ? error.message : error})`;
      }
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
  const body = isJsonObject(response.body) ? response.body : {};
  if (response.status === 404) {
    // The cluster says which: a member that runs no such task, or a node it does not know.
    const error = isJsonObject(body.error) ? body.error : {};
    const reason = typeof error.reason === "string" ? error.reason : "";
    if (reason.includes("isn't part of the cluster")) {
      return `its node ${node} is not in the cluster (hung, or gone), and once back it could ` +
        `write into ${index} what its source held when it began, bringing back documents ` +
        `deleted since`;
    }
    // Only the cluster's own word proves it: a proxy's 404, or another, proves nothing.
    if (reason.includes("isn't running and hasn't stored its results")) return undefined;
    return `the cluster's answer does not say it ended (HTTP 404: ${renderValue(body, 200)})`;
  }
  if (body.completed === true) return undefined;
  const task = isJsonObject(body.task) ? body.task : {};
  // The id taken by another task since: the node restarted, and the copy died with it.
  if (!copiesInto(task.description, index, typed)) return undefined;
  return `it is still running on node ${node}`;
}
