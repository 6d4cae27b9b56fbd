import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  bootstrap,
  type Class,
  DeleteMapping,
  GetMapping,
  HttpRequest,
  PatchMapping,
  PostMapping,
  PutMapping,
  RequestMapping,
  RestController,
} from "../../mod.ts";
import type { MappingDecorator } from "../../types.ts";
import { call } from "../helpers.ts";
import { propertyOptions } from "../property.ts";
import {
  expected,
  type Method,
  type ModelRoute,
  pathOf,
  probesArb,
  tableArb,
  variablesOf,
} from "./route_model.ts";

const MAPPING: Record<
  Method,
  (path: string, ...binders: [typeof HttpRequest]) => MappingDecorator
> = {
  GET: GetMapping,
  POST: PostMapping,
  PUT: PutMapping,
  DELETE: DeleteMapping,
  PATCH: PatchMapping,
};

let beans = 0;

// One controller per route, with part of the route's path as the class prefix, so that the table
// is spread over controllers declared in a random order. It answers with its id and its variables.
function controllerOf(route: ModelRoute, split: number): Class {
  const prefixSegments = route.segments.slice(0, split);
  const full = pathOf(route.segments, route.rest);
  const prefix = split === 0 ? "" : pathOf(prefixSegments);
  const path = full.slice(prefix.length === 1 ? 0 : prefix.length);
  const map = MAPPING[route.method](path, HttpRequest);
  const id = route.id;
  const names = variablesOf(route);
  @RestController({ name: `generated${beans++}` })
  @RequestMapping(prefix)
  class Generated {
    @map
    handle(request: HttpRequest): string {
      return `route:${id} ${JSON.stringify(names.map((n) => request.getPathVariable(n)))}`;
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
    // Which of Hono's routers served: the app's SmartRouter picks RegExpRouter, or TrieRouter for
    // a table RegExpRouter cannot take (a literal beside a variable, two variables in one place).
    const routers = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(scenario, async ({ table, splits, order, probes, methods }) => {
        const controllers = order.map((id) => controllerOf(table[id], splits[id]));
        const app = await bootstrap({ controllers });
        await call(app, "GET", "/");
        const router = app.hono.router.name;
        routers.set(router, (routers.get(router) ?? 0) + 1);
        for (const [i, path] of probes.entries()) {
          const method = methods[i];
          const want = expected(table, method, path);
          const res = await call(app, method, path);
          const where = `${method} ${path}`;
          const body = await res.text();
          switch (want.kind) {
            case "route":
              assert.equal(res.status, 200, `${where}: ${body}`);
              if (method !== "HEAD") {
                assert.equal(body, `route:${want.id} ${JSON.stringify(want.values)}`, where);
              }
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
    // Both routers answered some tables (unless the run was cut to a few by FC_RUNS).
    if ([...routers.values()].reduce((a, b) => a + b, 0) >= 100) {
      assert.deepEqual(
        [...routers.keys()].sort(),
        ["SmartRouter + RegExpRouter", "SmartRouter + TrieRouter"],
      );
    }
  });
});
