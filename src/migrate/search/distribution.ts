import { isJsonObject } from "../files/json_object.ts";

/** The search engines the runner speaks to: they differ in their lifecycle-policy API. */
export type DistributionName = "opensearch" | "elasticsearch";

/** What a cluster's `GET /` says it is. */
export interface Distribution {
  readonly name: DistributionName;
  /** `version.number` (`2.19.1`, `7.10.2`); `unknown` when the answer names none. */
  readonly version: string;
}

/**
 * Reads the distribution from the answer to `GET /`. OpenSearch says `"distribution":
 * "opensearch"` under `version`, even where it reports 7.10.2 as its version number for old
 * clients (`compatibility.override_main_response_version`); Elasticsearch says no distribution,
 * and names its `build_flavor` (`default`, `oss`) or its tagline. Any other body (a proxy's page)
 * is taken as OpenSearch, the runner's own cluster, whose requests the runner sent before it read
 * `GET /` at all. An answer other than 200 is not read here: a reindex stops on it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { distributionOf } from "./distribution.ts";
 *
 * const elasticsearch = {
 *   version: { number: "7.10.2", build_flavor: "oss" },
 *   tagline: "You Know, for Search",
 * };
 * assert.deepEqual(distributionOf(elasticsearch), { name: "elasticsearch", version: "7.10.2" });
 * const opensearch = { version: { distribution: "opensearch", number: "2.19.1" } };
 * assert.deepEqual(distributionOf(opensearch), { name: "opensearch", version: "2.19.1" });
 * assert.equal(distributionOf("<html>").name, "opensearch");
 * ```
 */
export function distributionOf(root: unknown): Distribution {
  const version = isJsonObject(root) && isJsonObject(root.version) ? root.version : {};
  const number = typeof version.number === "string" ? version.number : "unknown";
  const elasticsearch = version.distribution === undefined &&
    (typeof version.build_flavor === "string" ||
      (isJsonObject(root) && root.tagline === "You Know, for Search"));
  return { name: elasticsearch ? "elasticsearch" : "opensearch", version: number };
}

/** `OpenSearch 2.19.1`, `Elasticsearch 7.10.2`: for messages. */
export function describeDistribution(distribution: Distribution): string {
  const name = distribution.name === "opensearch" ? "OpenSearch" : "Elasticsearch";
  return distribution.version === "unknown" ? name : `${name} ${distribution.version}`;
}
