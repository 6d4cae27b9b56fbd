// Method security on real workerd: the cases of tests/security/method_security_test.ts against
// tests/fixtures/method_secured_edge.ts, bundled as tools/bundle_worker.ts bundles the sample app.
// @Secured, @PreAuthorize and @PostAuthorize refuse at the edge of a request (403,
// insufficient_scope where scopes decide), a cron run has no caller (401 inside, unless
// @PermitAll()), and an @Async run keeps the caller of the request that queued it across
// workerd's AsyncLocalStorage (`nodejs_als`).
//
// serveWorker serves one worker; a cron trigger needs a second one, as in
// tests/edge/workerd_scheduled_test.ts: it fires `env.APP.scheduled(...)` through a service
// binding, a method that exists only with the experimental `service_binding_extra_handlers`
// (`workerd serve --experimental`). The flag is the trigger's alone.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serveWithTrigger } from "./workerd.ts";
import { suiteTempDirs } from "../temp_dir.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "../security/issuer_server.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/method_secured_edge.ts", import.meta.url));

// GET /?cron=<expression>: fires the app's scheduled event, answers what workerd reports of it.
const TRIGGER = `export default {
  async fetch(request, env) {
    const cron = new URL(request.url).searchParams.get("cron");
    return Response.json(await env.APP.scheduled({ cron, scheduledTime: Date.now() }));
  },
};
`;

// The app reaches the issuer on loopback, which workerd's default outbound network refuses.
const config = (issuer: string) =>
  `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "app", worker = .app),
    (name = "trigger", worker = .trigger),
    (name = "loopback", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [
    (name = "app", address = "127.0.0.1:0", http = (), service = "app"),
    (name = "trigger", address = "127.0.0.1:0", http = (), service = "trigger"),
  ],
);

const app :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "method_secured_edge.js")],
  compatibilityDate = "2026-10-23",
  compatibilityFlags = ["nodejs_als"],
  globalOutbound = "loopback",
  bindings = [(name = "ISSUER", text = ${JSON.stringify(issuer)})],
);

const trigger :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "trigger.js")],
  compatibilityDate = "2026-10-23",
  compatibilityFlags = ["service_binding_extra_handlers"],
  bindings = [(name = "APP", service = "app")],
);
`;

interface Outcomes {
  outcomes: string[];
  calls: number;
  reports: number;
}

describe("method security on workerd", () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  let origin: string;
  let trigger: string;
  let child: ChildProcess | undefined;
  let output: () => string = () => "";
  after(async () => {
    child?.kill();
    await issuer?.down();
  });
  // Registered after workerd's stop, so that its folder goes after it.
  const suiteDir = suiteTempDirs();

  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
    const served = await serveWithTrigger({
      fixture: FIXTURE,
      name: "method_secured_edge",
      dir: await suiteDir("thaw-workerd-method-security-"),
      trigger: TRIGGER,
      config: config(issuer.url),
      readyPath: "/outcomes",
    });
    ({ child, output, app: origin, trigger } = served);
  });

  const as = async (claims: Record<string, unknown>) => ({
    authorization: `Bearer ${await token(key, { iss: issuer.url, ...claims }, Date.now())}`,
  });
  const get = async (path: string, headers: Record<string, string> = {}) =>
    await fetch(`${origin}${path}`, { headers });
  const text = async (path: string, headers: Record<string, string>) => {
    const response = await get(path, headers);
    const body = await response.text();
    assert.equal(response.status, 200, `${path}: ${body}\n${output()}`);
    return body;
  };
  const outcomes = async (): Promise<Outcomes> => {
    const response = await get("/outcomes");
    assert.equal(response.status, 200);
    return await response.json();
  };
  const fire = async (cron: string): Promise<{ outcome: string; noRetry: boolean }> => {
    const response = await fetch(`${trigger}/?cron=${encodeURIComponent(cron)}`);
    const body = await response.text();
    assert.equal(response.status, 200, `the trigger worker failed: ${body}\n${output()}`);
    return JSON.parse(body);
  };

  it("refuses a route's scope with 403 insufficient_scope, naming the scope", async () => {
    const scoped = await get("/orders/write", await as({ sub: "ann", scope: "orders:read" }));
    assert.equal(scoped.status, 403);
    assert.equal(
      scoped.headers.get("www-authenticate"),
      'Bearer error="insufficient_scope", scope="orders:write"',
    );
    await scoped.body?.cancel();
    assert.equal(
      await text("/orders/write", await as({ sub: "ann", scope: "orders:write" })),
      "written",
    );
  });

  it("refuses a bean's role with a bare 403, and runs it for the role", async () => {
    const before = (await outcomes()).calls;
    const role = await get("/orders/close/9", await as({ sub: "ann", scope: "orders:read" }));
    assert.equal(role.status, 403);
    // A role decided: no scope to name, and the role itself is not told.
    assert.equal(role.headers.get("www-authenticate"), null);
    assert.doesNotMatch(await role.text(), /ROLE_ADMIN/);
    assert.equal((await outcomes()).calls, before);
    assert.equal(
      await text("/orders/close/9", await as({ sub: "root", roles: ["ADMIN"] })),
      "closed 9",
    );
    assert.equal((await outcomes()).calls, before + 1);
  });

  it("checks @PreAuthorize against the method's arguments", async () => {
    const ann = await as({ sub: "ann", scope: "orders:read" });
    assert.equal(await text("/orders/statement/ann", ann), "statement of ann");
    const bobs = await get("/orders/statement/bob", ann);
    assert.equal(bobs.status, 403);
    await bobs.body?.cancel();
  });

  it("runs a @PostAuthorize method, then gives its result to its owner alone, leaking nothing", async () => {
    const ann = await as({ sub: "ann", scope: "orders:read" });
    assert.deepEqual(JSON.parse(await text("/orders/receipt/ann", ann)), {
      owner: "ann",
      secret: "receipt-secret-of-ann",
    });
    const bobs = await get("/orders/receipt/bob", ann);
    assert.equal(bobs.status, 403);
    assert.doesNotMatch(await bobs.text(), /receipt-secret/);
    assert.doesNotMatch([...bobs.headers].join("\n"), /receipt-secret/);
    assert.doesNotMatch(output(), /receipt-secret-of-bob/);
  });

  it("refuses a secured call in a cron run, which has no caller, and allows @PermitAll()", async () => {
    const before = await outcomes();
    assert.deepEqual(await fire("0 3 * * *"), { outcome: "ok", noRetry: false });
    assert.deepEqual(await outcomes(), {
      outcomes: [
        ...before.outcomes,
        "denied 401 without a caller",
        `count ${before.calls}`,
      ],
      calls: before.calls,
      reports: before.reports,
    });
  });

  it("keeps the caller in an @Async run, and refuses one without the scope", async () => {
    const before = (await outcomes()).reports;
    // "apart": the run had not started when the call returned, so the executor ran it.
    assert.equal(
      await text("/orders/report", await as({ sub: "carol", scope: "reports" })),
      "report for carol, run apart",
    );
    assert.equal((await outcomes()).reports, before + 1);
    const refused = await get("/orders/report", await as({ sub: "eve", scope: "other" }));
    assert.equal(refused.status, 403);
    assert.equal(
      refused.headers.get("www-authenticate"),
      'Bearer error="insufficient_scope", scope="reports"',
    );
    await refused.body?.cancel();
    // Refused before the executor: no run started.
    assert.equal((await outcomes()).reports, before + 1);
  });

  it("logs no uncaught error", () => {
    assert.doesNotMatch(output(), /uncaught|error/i);
  });
});
