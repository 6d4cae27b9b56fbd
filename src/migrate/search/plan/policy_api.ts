import { isJsonObject } from "../../files/json_object.ts";

/**
 * A cluster's index lifecycle policy API: OpenSearch's Index State Management plugin, or
 * Elasticsearch's Index Lifecycle Management. A `*-policy.json` file's body is one API's own
 * (`states` for ISM, `phases` for ILM): the runner does not translate one into the other.
 */
export interface PolicyApi {
  /** `ISM` or `ILM`, for messages. */
  readonly name: "ISM" | "ILM";
  /** The path of policy `id`, for GET and PUT. */
  path(id: string): string;
  /**
   * Whether an update carries the sequence numbers of the policy read before it (ISM refuses an
   * update without them); ILM's PUT replaces the policy whatever it was.
   */
  readonly conditional: boolean;
  /**
   * The policy in the answer to a GET of its path, as `{ policy: {...} }`: ISM answers that
   * shape, ILM keys it by the policy's id. `undefined` when the answer holds none.
   */
  live(body: unknown, id: string): unknown;
  /** What to tell of an update: indices the policy manages do not take it at once. */
  updateNotice(id: string): string;
}

const ISM: PolicyApi = {
  name: "ISM",
  path: (id) => `/_plugins/_ism/policies/${encodeURIComponent(id)}`,
  conditional: true,
  live: (body) => body,
  updateNotice: (id) =>
    `policy "${id}" updated: indices it already manages keep the previous version until you ` +
    `apply it with POST /_plugins/_ism/change_policy`,
};

const ILM: PolicyApi = {
  name: "ILM",
  path: (id) => `/_ilm/policy/${encodeURIComponent(id)}`,
  conditional: false,
  live: (body, id) => isJsonObject(body) && Object.hasOwn(body, id) ? body[id] : undefined,
  updateNotice: (id) =>
    `policy "${id}" updated: an index it manages may finish its current phase under the ` +
    `previous version (Elasticsearch changes a phase under way only where it safely can)`,
};

/**
 * The API a policy definition (the `policy` object of a `*-policy.json` file) is written for:
 * ILM when it has `phases` and no `states`, ISM otherwise, as every policy file went to ISM before
 * Elasticsearch was supported. The file, not the cluster, decides: the same body cannot suit both,
 * and the cluster refuses the other's path with its own error (which the runner explains by
 * reading `GET /`, see `distribution.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { policyApiOf } from "./policy_api.ts";
 *
 * const ilm = policyApiOf({ phases: { delete: { min_age: "30d", actions: { delete: {} } } } });
 * assert.equal(ilm.path("logs"), "/_ilm/policy/logs");
 * const ism = policyApiOf({ default_state: "hot", states: [] });
 * assert.equal(ism.path("hot warm"), "/_plugins/_ism/policies/hot%20warm");
 * const answer = { logs: { version: 2, policy: { phases: {} } } };
 * assert.deepEqual(ilm.live(answer, "logs"), { version: 2, policy: { phases: {} } });
 * ```
 */
export function policyApiOf(definition: unknown): PolicyApi {
  const ilm = isJsonObject(definition) && Object.hasOwn(definition, "phases") &&
    !Object.hasOwn(definition, "states");
  return ilm ? ILM : ISM;
}
