import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  bootstrap,
  type Class,
  DeleteMapping,
  GetMapping,
  type MappingDecorator,
  PatchMapping,
  PostMapping,
  PutMapping,
  RequestMapping,
  RestController,
} from "../../mod.ts";
import { call } from "../helpers.ts";
import { propertyOptions } from "../property.ts";
import {
  expected,
  type Method,
  type ModelRoute,
  pathOf,
  probesArb,
  tableArb,
} from "./route_model.ts";

const MAPPING: Record<Method, (path: string) => MappingDecorator> = {
  GET: GetMapping,
  POST: PostMapping,
  PUT: PutMapping,
  DELETE: DeleteMapping,
  PATCH: PatchMapping,
};

let beans = 0;

// One controller per route, with part of the route's path as the class prefix, so that the table
// is spread over controllers declared in a random order.
function controllerOf(route: ModelRoute, split: number): Class {
  const prefixSegments = route.segments.slice(0, split);
  const full = pathOf(route.segments);
  const prefix = split === 0 ? "" : pathOf(prefixSegments);
  const path = full.slice(prefix.length === 1 ? 0 : prefix.length);
  const map = MAPPING[route.method](path);
  const id = route.id;
  @RestController({ name: `generated${beans++}` })
  @RequestMapping(prefix)
  class Generated {
    @map
    handle(): string {
      return `route:${id}`;
    }
  }
  return Generated;
}

describe("routing through bootstrap and app.fetch (property)", () => {
  it("every probe reaches the model's handler, or the model's 404/405/204", async () => {
    const scenario = tableArb.chain((table) =>
      fc.record({
        table: fc.constant(table),
        splits: fc.tuple(...table.map((r) => fc.integer({ min: 0, max: r.segments.length }))),
        order: fc.shuffledSubarray(table.map((r) => r.id), { minLength: table.length }),
        probes: probesArb(table),
        methods: fc.array(
          fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"),
          { minLength: 12, maxLength: 12 },
        ),
      })
    );
    await fc.assert(
      fc.asyncProperty(scenario, async ({ table, splits, order, probes, methods }) => {
        const controllers = order.map((id) => controllerOf(table[id], splits[id]));
        const app = await bootstrap({ controllers });
        for (const [i, path] of probes.entries()) {
          const method = methods[i];
          const want = expected(table, method, path);
          const res = await call(app, method, path);
          const where = `${method} ${path}`;
          const body = await res.text();
          switch (want.kind) {
            case "route":
              assert.equal(res.status, 200, `${where}: ${body}`);
              if (method !== "HEAD") assert.equal(body, `route:${want.id}`, where);
              break;
            case "404":
              assert.equal(res.status, 404, where);
              break;
            case "405":
              assert.equal(res.status, 405, where);
              assert.equal(res.headers.get("allow"), want.allow, where);
              break;
            case "204":
              assert.equal(res.status, 204, where);
              assert.equal(res.headers.get("allow"), want.allow, where);
          }
        }
      }),
      propertyOptions(150),
    );
  });
});
