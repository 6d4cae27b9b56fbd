import { isJsonObject } from "../../files/json_object.ts";
import type { Rules } from "./json_diff.ts";

/**
 * Drift rules for ISM policies (checked on an OpenSearch 2.19 node; docs/migrations-reference.md,
 * "Drift"): a policy is compared on what its file sets. What ISM adds (an action's `retry`,
 * `error_notification: null`, `last_updated_time`...) is not compared, nor are `policy_id`,
 * `last_updated_time` and `schema_version` the file may set; an `ism_template` object is the
 * cluster's list of one.
 */

// Kept by ISM itself, whatever the file says.
const POLICY_OWN_KEYS = new Set(["policy_id", "last_updated_time", "schema_version"]);

/** A key the cluster has that the file does not is what ISM adds: no difference. */
export const POLICY_RULES = { extras: "ignore" } as const satisfies Rules;

/**
 * The two policies to compare: the `policy` of the file's body (`{"policy": {...}}`) without the
 * keys ISM keeps, an `ism_template` object as a list of one where the cluster has one, and the
 * `policy` of the answer to `GET /_plugins/_ism/policies/{id}`. Either taken as it is when either
 * is not an object.
 */
export function policyForms(file: unknown, cluster: unknown): [file: unknown, cluster: unknown] {
  const filePolicy = isJsonObject(file) ? file.policy : undefined;
  const livePolicy = isJsonObject(cluster) ? cluster.policy : undefined;
  if (!isJsonObject(filePolicy) || !isJsonObject(livePolicy)) return [filePolicy, livePolicy];
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(filePolicy)) {
    if (POLICY_OWN_KEYS.has(key)) continue;
    const live = Object.hasOwn(livePolicy, key) ? livePolicy[key] : undefined;
    entries.push([
      key,
      key === "ism_template" && isJsonObject(value) && Array.isArray(live) && live.length === 1
        ? [value]
        : value,
    ]);
  }
  return [Object.fromEntries(entries), livePolicy];
}
