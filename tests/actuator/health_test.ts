import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  aggregateHealth,
  type ComponentHealth,
  type ShowDetails,
  statusAnswer,
} from "../../src/actuator/health.ts";
import { propertyOptions } from "../property.ts";

const up: ComponentHealth = { status: "UP" };
const down: ComponentHealth = { status: "DOWN", details: { error: "refused" } };

// Names as `@HealthIndicator` takes them, with the ones an object's prototype already has.
const nameArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/),
  fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty"),
);
const componentArb: fc.Arbitrary<ComponentHealth> = fc.oneof(
  fc.record({ status: fc.constantFrom("UP" as const, "DOWN" as const) }),
  fc.record({
    status: fc.constantFrom("UP" as const, "DOWN" as const),
    details: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
      minKeys: 1,
      maxKeys: 4,
    }),
  }),
);
const componentsArb = fc.uniqueArray(fc.tuple(nameArb, componentArb), {
  selector: ([name]) => name,
  maxLength: 8,
}).map((entries) => new Map(entries));

describe("aggregating the components' health", () => {
  it("is DOWN (503) iff some component is DOWN; components shown iff always (property)", () => {
    fc.assert(
      fc.property(
        componentsArb,
        fc.constantFrom<ShowDetails>("always", "never"),
        (components, showDetails) => {
          const answer = aggregateHealth(components, showDetails);
          const anyDown = [...components.values()].some((c) => c.status === "DOWN");
          assert.equal(answer.body.status, anyDown ? "DOWN" : "UP");
          assert.equal(answer.httpStatus, anyDown ? 503 : 200);
          const shown = answer.body.components;
          if (showDetails === "never" || components.size === 0) {
            assert.deepEqual(Object.keys(answer.body), ["status"]);
            return;
          }
          assert.ok(shown !== undefined);
          // Every component as an own key, with its status and details as given.
          const names = [...components.keys()].sort();
          assert.deepEqual(Object.keys(shown).sort(), names);
          for (const name of names) {
            const given = components.get(name)!;
            assert.ok(Object.hasOwn(shown, name), name);
            assert.equal(shown[name].status, given.status);
            assert.equal(shown[name].details, given.details);
            assert.equal(Object.hasOwn(shown[name], "details"), given.details !== undefined);
          }
          // What JSON writes is what a client reads: no name lost to a prototype.
          const read = JSON.parse(JSON.stringify(answer.body));
          assert.deepEqual(Object.keys(read.components).sort(), names);
        },
      ),
      propertyOptions(200),
    );
  });

  it("writes Spring Boot's shape", () => {
    const components = new Map<string, ComponentHealth>([
      ["db", { status: "UP", details: { database: "SQLite" } }],
      ["cache", down],
      ["mail", up],
    ]);
    assert.deepEqual(aggregateHealth(components, "always"), {
      httpStatus: 503,
      body: {
        status: "DOWN",
        components: {
          cache: { status: "DOWN", details: { error: "refused" } },
          db: { status: "UP", details: { database: "SQLite" } },
          mail: { status: "UP" },
        },
      },
    });
    assert.deepEqual(aggregateHealth(components, "never"), {
      httpStatus: 503,
      body: { status: "DOWN" },
    });
  });

  it("is UP without components, shown or not", () => {
    for (const showDetails of ["always", "never"] as const) {
      assert.deepEqual(aggregateHealth(new Map(), showDetails), {
        httpStatus: 200,
        body: { status: "UP" },
      });
    }
  });

  it("answers a status alone for the probes", () => {
    assert.deepEqual(statusAnswer("UP"), { httpStatus: 200, body: { status: "UP" } });
    assert.deepEqual(statusAnswer("DOWN"), { httpStatus: 503, body: { status: "DOWN" } });
  });
});
