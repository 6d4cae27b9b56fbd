// Security's counters: thaw.security.authentications by scheme, outcome and reason, and
// thaw.security.access.denials by reason, read from the in-memory SDK and scraped from
// /actuator/prometheus, for tokens checked by a real app.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as api from "@opentelemetry/api";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { exportSPKI } from "jose";
import { bootstrap, GetMapping, RestController } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { PreAuthorize, Secured, security } from "../../security.ts";
import { securityMetrics } from "../../src/security/security_metrics.ts";
import { PROMETHEUS, samples, sampleValue, scrape } from "../actuator/prometheus_samples.ts";
import { memoryLogger } from "../helpers.ts";
import { CollectingReader, restoreMeterProviderAfter, valueOf } from "../metric_reader.ts";
import { type SigningKey, signingKey, token } from "./issuer_server.ts";

restoreMeterProviderAfter();

@RestController()
class Reports {
  @GetMapping("/reports")
  list(): string {
    return "reports";
  }

  @GetMapping("/admin")
  @Secured("ROLE_ADMIN")
  admin(): string {
    return "admin";
  }

  @GetMapping("/own")
  @PreAuthorize((caller) => caller.name === "nobody")
  own(): string {
    return "own";
  }
}

const AUTHENTICATIONS = "thaw.security.authentications";
const DENIALS = "thaw.security.access.denials";

async function securedApp(key: SigningKey, extra: Record<string, unknown> = {}) {
  return await bootstrap({
    controllers: [Reports],
    config: {
      ...extra,
      security: {
        ...(extra.security as Record<string, unknown> | undefined),
        oauth2: {
          resourceserver: {
            jwt: { "public-key": await exportSPKI(key.publicKey), audiences: ["reports"] },
          },
        },
      },
    },
    logger: memoryLogger(),
    security: security(),
  });
}

const get = (
  app: { fetch(r: Request): Response | Promise<Response> },
  path: string,
  authorization?: string,
) =>
  Promise.resolve(app.fetch(
    new Request(`http://localhost${path}`, {
      headers: authorization === undefined ? {} : { authorization },
    }),
  ));

describe("security's metrics in the SDK", () => {
  let reader: CollectingReader;
  let provider: MeterProvider;
  let key: SigningKey;
  let other: SigningKey;

  // Puts back the provider this describe replaces: in one process (Bun's and Node's unit runs) it
  // is the actuator's registry, which the scrape below reads; disabling it left the scrape empty.
  restoreMeterProviderAfter();
  before(async () => {
    api.metrics.disable();
    reader = new CollectingReader();
    provider = new MeterProvider({ readers: [reader] });
    api.metrics.setGlobalMeterProvider(provider);
    key = await signingKey("k1", "ES256");
    other = await signingKey("k1", "ES256");
  });

  it("counts successes and failures by reason, and method security's refusals", async () => {
    const app = await securedApp(key);
    try {
      const now = Date.now();
      const valid = await token(key, { aud: "reports" }, now);
      const expired = await token(key, { aud: "reports", exp: Math.floor(now / 1000) - 3600 }, now);
      const elsewhere = await token(key, { aud: "billing" }, now);
      const forged = await token(other, { aud: "reports" }, now);
      const answers = [
        await get(app, "/reports", `Bearer ${valid}`),
        await get(app, "/reports", `Bearer ${valid}`),
        await get(app, "/reports", `Bearer ${expired}`),
        await get(app, "/reports", `Bearer ${elsewhere}`),
        await get(app, "/reports", `Bearer ${forged}`),
        await get(app, "/reports", "Bearer a b"),
        await get(app, "/reports"),
        await get(app, "/admin", `Bearer ${valid}`),
        await get(app, "/own", `Bearer ${valid}`),
      ];
      assert.deepEqual(
        answers.map((r) => r.status),
        [200, 200, 401, 401, 401, 400, 401, 403, 403],
      );
      const points = await reader.points(AUTHENTICATIONS);
      const count = (attributes: api.Attributes) => valueOf(points, attributes);
      assert.equal(count({ scheme: "bearer", outcome: "success" }), 4);
      assert.equal(count({ scheme: "bearer", outcome: "failure", reason: "expired" }), 1);
      assert.equal(count({ scheme: "bearer", outcome: "failure", reason: "wrong-audience" }), 1);
      assert.equal(count({ scheme: "bearer", outcome: "failure", reason: "bad-signature" }), 1);
      assert.equal(count({ scheme: "bearer", outcome: "failure", reason: "invalid-request" }), 1);
      // No credentials: nothing was checked, nothing counted (a load balancer's probes).
      assert.equal(points.length, 5);
      assert.ok(
        points.every((p) => !("reason" in p.attributes) || p.attributes.outcome === "failure"),
      );
      const denials = await reader.points(DENIALS);
      assert.equal(valueOf(denials, { reason: "authority" }), 1);
      assert.equal(valueOf(denials, { reason: "check" }), 1);
    } finally {
      await app.close();
    }
  });

  it("is the one hook the other schemes report to: { scheme, outcome, reason }", async () => {
    const events = securityMetrics(api);
    events.authentication({ scheme: "basic", outcome: "failure", reason: "wrong-password" });
    events.authentication({ scheme: "basic", outcome: "failure", reason: "wrong-password" });
    events.authentication({ scheme: "api-key", outcome: "success" });
    events.denied("no-caller");
    const points = await reader.points(AUTHENTICATIONS);
    assert.equal(
      valueOf(points, { scheme: "basic", outcome: "failure", reason: "wrong-password" }),
      2,
    );
    assert.equal(valueOf(points, { scheme: "api-key", outcome: "success" }), 1);
    assert.equal(valueOf(await reader.points(DENIALS), { reason: "no-caller" }), 1);
  });

  it("counts API-key callers by outcome and reason, as bearer tokens", async () => {
    const before = async (attributes: api.Attributes) =>
      Number(valueOf(await reader.points(AUTHENTICATIONS), attributes) ?? 0);
    const keyed = { scheme: "api-key", outcome: "success" };
    const unknown = { scheme: "api-key", outcome: "failure", reason: "unknown-key" };
    const [ok0, bad0] = [await before(keyed), await before(unknown)];
    const app = await securedApp(key, {
      security: {
        "api-keys": { keys: { batch: { key: "k-0123456789abcdef", authorities: ["ROLE_X"] } } },
      },
    });
    try {
      const call = (value: string) =>
        app.fetch(new Request("http://x/reports", { headers: { "x-api-key": value } }));
      assert.equal((await call("k-0123456789abcdef")).status, 200);
      assert.equal((await call("k-0123456789abcdeX")).status, 401);
      assert.equal(await before(keyed), ok0 + 1);
      assert.equal(await before(unknown), bad0 + 1);
    } finally {
      await app.close();
    }
  });

  it("records nothing, and fails nothing, while no meter provider is registered", async () => {
    api.metrics.disable();
    const events = securityMetrics(api);
    events.authentication({ scheme: "bearer", outcome: "failure", reason: "expired" });
    events.denied("authority");
    // Registered afterwards: followed at the next event.
    const later = new CollectingReader();
    api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [later] }));
    events.authentication({ scheme: "bearer", outcome: "failure", reason: "expired" });
    assert.equal(
      valueOf(await later.points(AUTHENTICATIONS), { reason: "expired" }),
      1,
    );
    api.metrics.disable();
    api.metrics.setGlobalMeterProvider(provider);
  });
});

describe("security's metrics at /actuator/prometheus", () => {
  it("serves thaw_security_authentications_total by scheme, outcome and reason", async () => {
    const key = await signingKey("k1", "ES256");
    const app = await bootstrap({
      controllers: [Reports],
      config: {
        ...PROMETHEUS,
        security: {
          "permit-all": ["/actuator/prometheus"],
          oauth2: {
            resourceserver: {
              jwt: { "public-key": await exportSPKI(key.publicKey), audiences: ["reports"] },
            },
          },
        },
      },
      logger: memoryLogger(),
      actuator: actuator(),
      security: security(),
    });
    try {
      const now = Date.now();
      const valid = await token(key, { aud: "reports" }, now);
      const expired = await token(key, { aud: "reports", exp: Math.floor(now / 1000) - 3600 }, now);
      // Counted from what the registry held before: in one process (Bun's, Node's unit run) other
      // test files' apps count into the same registry.
      const counts = async () => {
        const all = samples(await scrape(app));
        const value = (name: string, labels: Record<string, string>) =>
          Number(sampleValue(all, name, labels) ?? 0);
        return [
          value("thaw_security_authentications_total", { scheme: "bearer", outcome: "success" }),
          value("thaw_security_authentications_total", {
            scheme: "bearer",
            outcome: "failure",
            reason: "expired",
          }),
          value("thaw_security_access_denials_total", { reason: "authority" }),
        ];
      };
      const before = await counts();
      assert.equal((await get(app, "/reports", `Bearer ${valid}`)).status, 200);
      assert.equal((await get(app, "/reports", `Bearer ${expired}`)).status, 401);
      assert.equal((await get(app, "/admin", `Bearer ${valid}`)).status, 403);
      const after = await counts();
      assert.deepEqual(after.map((n, i) => n - before[i]), [2, 1, 1]);
    } finally {
      await app.close();
    }
  });
});
