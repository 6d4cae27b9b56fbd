import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { prometheusName, unitSuffix } from "../../src/actuator/prometheus_names.ts";
import { propertyOptions } from "../property.ts";

describe("Prometheus names", () => {
  it("append the unit's word, as OpenTelemetry's Prometheus rules say", () => {
    const cases: [string, string, string][] = [
      ["http.server.request.duration", "s", "http.server.request.duration_seconds"],
      ["db.latency", "ms", "db.latency_milliseconds"],
      ["body.size", "By", "body.size_bytes"],
      ["throughput", "By/s", "throughput_bytes_per_second"],
      ["rate", "1/s", "rate_per_second"],
      ["orders.created", "{order}", "orders.created"],
      ["cpu.utilization", "1", "cpu.utilization"],
      ["queue.wait_seconds", "s", "queue.wait_seconds"],
      ["jobs", "requests", "jobs_requests"],
      ["odd", "kg/fortnight", "odd_kg_per_fortnight"],
      ["area", "m²", "area"],
      ["nested", "a/b/c", "nested"],
      // A gauge's `_count`, which promtool refuses: the conventions' connections by state.
      ["db.client.connection.count", "{connection}", "db.client.connections"],
    ];
    for (const [name, unit, expected] of cases) {
      assert.equal(prometheusName(name, unit), expected, `${name} in ${unit}`);
    }
  });

  it("never append a suffix twice, nor anything but letters, digits and _ (property)", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (name, unit) => {
        const once = prometheusName(name, unit);
        assert.equal(prometheusName(once, unit), once);
        assert.match(unitSuffix(unit), /^[A-Za-z_]*$/);
        assert.ok(once.startsWith(name) || name === "db.client.connection.count");
      }),
      propertyOptions(),
    );
  });
});
