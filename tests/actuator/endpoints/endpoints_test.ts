// Thaw's own endpoints as entries of the actuator's table: each file's endpoint has the id its file
// is named after, and says why it cannot be served where what it reads is missing.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ActuatorEndpoint, EndpointHost } from "../../../src/actuator/actuator_endpoint.ts";
import { BUILT_IN, ENDPOINTS } from "../../../src/actuator/actuator_endpoints.ts";
import { cachesEndpoint } from "../../../src/actuator/endpoints/caches.ts";
import { configpropsEndpoint } from "../../../src/actuator/endpoints/configprops.ts";
import { envEndpoint } from "../../../src/actuator/endpoints/env.ts";
import { healthEndpoint } from "../../../src/actuator/endpoints/health.ts";
import { infoEndpoint } from "../../../src/actuator/endpoints/info.ts";
import { loggersEndpoint } from "../../../src/actuator/endpoints/loggers.ts";
import { mappingsEndpoint } from "../../../src/actuator/endpoints/mappings.ts";
import { migrationsEndpoint } from "../../../src/actuator/endpoints/migrations.ts";
import { prometheusEndpoint } from "../../../src/actuator/endpoints/prometheus.ts";
import { scheduledtasksEndpoint } from "../../../src/actuator/endpoints/scheduledtasks.ts";

const FILES: Record<string, ActuatorEndpoint> = {
  caches: cachesEndpoint,
  configprops: configpropsEndpoint,
  env: envEndpoint,
  health: healthEndpoint,
  info: infoEndpoint,
  loggers: loggersEndpoint,
  mappings: mappingsEndpoint,
  migrations: migrationsEndpoint,
  prometheus: prometheusEndpoint,
  scheduledtasks: scheduledtasksEndpoint,
};

// Only what `unavailable` reads: the beans, the migrations option and the scrape.
function host(given: Partial<EndpointHost>): EndpointHost {
  return { beans: () => [], telemetry: { observers: [] }, ...given } as EndpointHost;
}

describe("the actuator's own endpoints", () => {
  it("are one a file, each of its file's id, listed in the table in the index's order", () => {
    for (const [file, endpoint] of Object.entries(FILES)) assert.equal(endpoint.id, file);
    assert.deepEqual([...BUILT_IN], Object.values(FILES));
    assert.deepEqual(ENDPOINTS, Object.keys(FILES));
  });

  it("say why they cannot be served where what they read is missing", () => {
    const bare = host({});
    assert.match(loggersEndpoint.unavailable!(bare)!, /LoggingSystem bean, and the app has none/);
    assert.match(migrationsEndpoint.unavailable!(bare)!, /pass actuator\(\{ migrations:/);
    assert.match(prometheusEndpoint.unavailable!(bare)!, /OpenTelemetry's packages/);
    const given = host({
      migrations: () => Promise.resolve({}),
      telemetry: { observers: [], scrape: () => Promise.resolve("") },
    });
    assert.equal(migrationsEndpoint.unavailable!(given), undefined);
    assert.equal(prometheusEndpoint.unavailable!(given), undefined);
    // The others read nothing that may be missing.
    for (const endpoint of [cachesEndpoint, configpropsEndpoint, envEndpoint, healthEndpoint]) {
      assert.equal(endpoint.unavailable, undefined, endpoint.id);
    }
    for (const endpoint of [infoEndpoint, mappingsEndpoint, scheduledtasksEndpoint]) {
      assert.equal(endpoint.unavailable, undefined, endpoint.id);
    }
  });
});
