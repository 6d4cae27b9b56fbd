import { type FailureDetail, MigrationFailure } from "../migration_error.ts";
import { COMMAND_LINE_NAMES, type OptionNames } from "../option_names.ts";
import {
  errorDetail,
  type SearchClient,
  type SearchResponse,
  SearchTransportError,
} from "./http/search_client.ts";
import type { SearchRequest } from "./plan/search_request.ts";
import { type PolicyApi, policyApiOf } from "./plan/policy_api.ts";
import { describeDistribution, distributionOf } from "./distribution.ts";

/** What applying a file did. */
export interface ApplyOutcome {
  /**
   * `created`, `updated`, `exists` (an index already there, an alias moved already), `sent`, or
   * `reindexed` (the documents copied and the alias moved).
   */
  readonly result: "created" | "updated" | "exists" | "sent" | "reindexed";
  readonly status: number;
  /** Something the user should know (a policy update not reaching managed indices). */
  readonly notice?: string;
}

/**
 * A request the cluster (or whatever answered for it) refused: the failure, and the answer, whose
 * body tells who refused it (an undo's 404 counts as undone only when the cluster said it).
 */
export class RequestRefused extends MigrationFailure {
  readonly answer: SearchResponse;

  constructor(detail: FailureDetail, answer: SearchResponse) {
    super(detail);
    this.answer = answer;
  }
}

/**
 * Sends the request(s) a planned file stands for. Index creation checks existence first; a policy
 * is read first, to tell a create from an update, and an ISM one is then written with its
 * sequence numbers, so a changed file really updates it (an ILM `PUT` replaces it as it is).
 * A template or policy upsert is safe to repeat on another host; an index creation or an
 * envelope other than GET/HEAD is not. `signal` aborts the request in flight.
 */
export async function applyRequest(
  client: SearchClient,
  request: SearchRequest,
  where: { connection: string; file: string },
  signal?: AbortSignal,
  optionNames: OptionNames = COMMAND_LINE_NAMES,
): Promise<ApplyOutcome> {
  const fail = (method: string, path: string, response: SearchResponse): never => {
    throw new RequestRefused({
      ...where,
      request: `${method} ${path}`,
      status: response.status,
      reason: errorDetail(response.body),
    }, response);
  };
  const ok = (r: SearchResponse) => r.status >= 200 && r.status < 300;

  switch (request.kind) {
    case "index": {
      const head = await client.send("HEAD", request.path, undefined, { signal });
      if (head.status === 200) return { result: "exists", status: 200 };
      if (head.status !== 404) fail("HEAD", request.path, head);
      const put = await client.send("PUT", request.path, request.body, { signal });
      if (!ok(put)) fail("PUT", request.path, put);
      return { result: "created", status: put.status };
    }
    case "policy": {
      const api = policyApiOf(request.body?.policy);
      // Read right before writing: ISM updates its own metadata after a create.
      for (let attempt = 0;; attempt++) {
        const current = await client.send("GET", request.path, undefined, { signal });
        let path = request.path;
        if (current.status === 200 && api.conditional) {
          const { _seq_no, _primary_term } = current.body as {
            _seq_no: number;
            _primary_term: number;
          };
          path += `?if_seq_no=${_seq_no}&if_primary_term=${_primary_term}`;
        } else if (current.status !== 200 && current.status !== 404) {
          await failOnOtherApi(client, api, where, `GET ${request.path}`, current, signal);
          fail("GET", request.path, current);
        }
        // Sent twice, it writes the same policy again: the 409 below reads and writes once more.
        const put = await client.send("PUT", path, request.body, { repeatable: true, signal });
        // A concurrent write between our read and write: read again, once.
        if (put.status === 409 && attempt === 0) continue;
        if (!ok(put)) {
          await failOnOtherApi(client, api, where, `PUT ${path}`, put, signal);
          fail("PUT", path, put);
        }
        const late = lateNotice(put, optionNames);
        if (current.status === 404) {
          return { result: "created", status: put.status, ...(late ? { notice: late } : {}) };
        }
        return {
          result: "updated",
          status: put.status,
          notice: api.updateNotice(request.name ?? "") + (late ? `; ${late}` : ""),
        };
      }
    }
    default: {
      const response = await client.send(request.method, request.path, request.body, {
        // A template PUT replaces the whole template with the same body each time.
        ...(request.kind === "template" ? { repeatable: true } : {}),
        signal,
      });
      if (!ok(response)) fail(request.method, request.path, response);
      const late = lateNotice(response, optionNames);
      return { result: "sent", status: response.status, ...(late ? { notice: late } : {}) };
    }
  }
}

/**
 * What to say of a request that another host answered after one took it without answering: a
 * host that hung holds it, and may apply it when it resumes, over whatever came since. Nothing
 * can call it back; `--drift` shows it once it landed.
 */
export function lateNotice(
  response: SearchResponse,
  optionNames: OptionNames,
): string | undefined {
  const hosts = response.unansweredBy;
  if (hosts === undefined || hosts.length === 0) return undefined;
  return `${hosts.join(", ")} took this request without answering before another host ` +
    `applied it: if it hung, it may apply it again when it resumes, over a later change; once ` +
    `it is back (or gone), run ${optionNames.invocation("status", ["drift"])}, and ` +
    `${optionNames.invocation("migrate", ["drift"])} if it shows this file`;
}

/**
 * A policy file written for the API this cluster does not have (an ISM policy sent to
 * Elasticsearch, an ILM one to OpenSearch) gets the cluster's own refusal, which does not say why
 * (`no handler found`, `Invalid index name [_ilm]`): `GET /` tells what the cluster is, and the
 * failure says so. Returns when the cluster is of the policy's kind, or cannot be read (a failed
 * read must not hide the refusal it was to explain).
 */
async function failOnOtherApi(
  client: SearchClient,
  api: PolicyApi,
  where: { connection: string; file: string },
  request: string,
  refused: SearchResponse,
  signal: AbortSignal | undefined,
): Promise<void> {
  const root = await client.send("GET", "/", undefined, { signal }).catch((error: unknown) => {
    if (error instanceof SearchTransportError) return undefined;
    throw error;
  });
  if (root?.status !== 200) return;
  const distribution = distributionOf(root.body);
  const wanted = distribution.name === "elasticsearch" ? "ILM" : "ISM";
  const answered = errorDetail(refused.body);
  const fail = (reason: string): never => {
    throw new MigrationFailure({ ...where, request, status: refused.status, reason });
  };
  if (wanted === api.name) {
    // Elasticsearch without ILM (the OSS build) takes /_ilm for an index name, or has no route.
    if (api.name === "ILM" && /no handler found|Invalid index name \[_ilm\]/.test(answered)) {
      fail(
        `${describeDistribution(distribution)} has no ILM (its OSS build has none): lifecycle ` +
          `policies need the default distribution (the cluster answered: ${answered})`,
      );
    }
    return;
  }
  fail(
    `this is an ${api.name} policy (${api.name === "ISM" ? '"states"' : '"phases"'}), ` +
      `but the cluster is ${describeDistribution(distribution)}, whose policies are ` +
      `${wanted}'s (${wanted === "ISM" ? '"states"' : '"phases"'}` +
      `${wanted === "ILM" ? ", where it has ILM: its OSS build has none" : ""}): write the ` +
      `policy for ${wanted} (the cluster answered: ${answered})`,
  );
}
