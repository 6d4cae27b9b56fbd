import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { applyRequest } from "../../../src/migrate/search/apply_request.ts";
import { planRequest } from "../../../src/migrate/search/plan/plan_request.ts";
import { SearchClient } from "../../../src/migrate/search/http/search_client.ts";
import type { SearchConnection } from "../../../src/migrate/search/search_connection.ts";
import type { Transport } from "../../../src/migrate/search/http/transport.ts";
import { MigrationFailure } from "../../../src/migrate/migration_error.ts";
import { distribution, os, Workspace } from "./cluster.ts";

const connection: SearchConnection = {
  name: "fake",
  hosts: [new URL("http://ism.test")],
  sslVerification: true,
  timeoutMs: 1000,
  connectTimeoutMs: 1000,
  proxy: undefined,
  migrationsEnabled: true,
  strictOrder: false,
  validateOnMigrate: false,
  recordsIndex: "framework_migrations",
  lockLeaseMs: 120_000,
};

/**
 * The ISM policy API as reference-notes section 2 records it: a PUT without sequence numbers only
 * creates (409 on an existing policy); with them it updates when they match. The Maven Central
 * node has no ISM plugin, so this fake stands in for the cluster here (see the README).
 */
function fakeIsm(
  log: string[],
): Transport & { policies: Map<string, { seq: number; policy: unknown }> } {
  const policies = new Map<string, { seq: number; policy: unknown }>();
  let seq = 0;
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status });
  return {
    policies,
    close() {},
    fetch: (url, init) => Promise.resolve(answer(url, init)),
  };
  function answer(url: URL, init: RequestInit): Response {
    {
      const id = decodeURIComponent(url.pathname.replace("/_plugins/_ism/policies/", ""));
      log.push(`${init.method} ${url.pathname}${url.search}`);
      const current = policies.get(id);
      if (init.method === "GET") {
        return current
          ? json(200, { _id: id, _seq_no: current.seq, _primary_term: 1, policy: current.policy })
          : json(404, { error: { type: "status_exception", reason: "Policy not found" } });
      }
      const ifSeq = url.searchParams.get("if_seq_no");
      const body = JSON.parse(String(init.body)) as { policy: unknown };
      if (
        current &&
        (ifSeq === null || Number(ifSeq) !== current.seq ||
          url.searchParams.get("if_primary_term") !== "1")
      ) {
        return json(409, {
          error: { type: "version_conflict_engine_exception", reason: "conflict" },
        });
      }
      policies.set(id, { seq: seq++, policy: body.policy });
      return json(current ? 200 : 201, { _id: id });
    }
  }
}

const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

describe("applyRequest: ISM policies", () => {
  it("creates a policy, then really updates it with the sequence numbers it read", async () => {
    const log: string[] = [];
    const ism = fakeIsm(log);
    const client = new SearchClient(connection, ism);
    const where = { connection: "fake", file: "p-policy.json" };
    const v1 = planRequest("p-policy.json", bytes({ policy: { description: "v1", states: [] } }));
    assert.equal((await applyRequest(client, v1, where)).result, "created");
    await applyRequest(
      client,
      planRequest("other-policy.json", bytes({ policy: { description: "o", states: [] } })),
      where,
    );
    const v2 = planRequest("p-policy.json", bytes({ policy: { description: "v2", states: [] } }));
    const updated = await applyRequest(client, v2, where);
    assert.equal(updated.result, "updated");
    assert.match(updated.notice!, /keep the previous version until .*change_policy/);
    assert.deepEqual(ism.policies.get("p")!.policy, { description: "v2", states: [] });
    assert.deepEqual(log.slice(-2), [
      "GET /_plugins/_ism/policies/p",
      "PUT /_plugins/_ism/policies/p?if_seq_no=0&if_primary_term=1",
    ]);
  });

  it("reads again once when another writer changed the policy in between", async () => {
    const log: string[] = [];
    const ism = fakeIsm(log);
    const client = new SearchClient(connection, ism);
    const where = { connection: "fake", file: "p-policy.json" };
    await applyRequest(
      client,
      planRequest("p-policy.json", bytes({ policy: { states: [] } })),
      where,
    );
    const inner = ism.fetch;
    let raced = false;
    ism.fetch = async (url, init) => {
      if (init.method === "PUT" && !raced) {
        raced = true; // someone else updates first: our sequence numbers are stale
        ism.policies.set("p", { seq: 99, policy: { other: true } });
      }
      return await inner(url, init);
    };
    const result = await applyRequest(
      client,
      planRequest("p-policy.json", bytes({ policy: { v: 3, states: [] } })),
      where,
    );
    assert.equal(result.result, "updated");
    assert.equal(log.filter((l) => l.startsWith("GET")).length, 3);
  });

  it("fails with the cluster's answer on the real node, which has no ISM plugin", async () => {
    // Elasticsearch has no ISM either: the runner says what it is, then what it answered.
    const explained = (await distribution()).name === "elasticsearch"
      ? "this is an ISM policy .* \\(the cluster answered: "
      : "";
    await using ws = await Workspace.create();
    await ws.file("p-policy.json", { policy: { description: "d", states: [] } });
    const run = await ws.run();
    assert.equal(run.code, 1);
    assert.match(
      run.err,
      new RegExp(
        `file p-policy\\.json, GET /_plugins/_ism/policies/p, HTTP 400: ${explained}no handler found`,
      ),
    );
    assert.equal((await os("GET", "/_cat/plugins?format=json")).status, 200);
  });

  it("reports a failure as a MigrationFailure naming the file and request", async () => {
    const client = new SearchClient(connection, {
      close() {},
      fetch: () =>
        Promise.resolve(
          new Response(JSON.stringify({ error: { type: "x_exception", reason: "why" } }), {
            status: 500,
          }),
        ),
    });
    await assert.rejects(
      applyRequest(client, planRequest("i-index.json", bytes({ mappings: {} })), {
        connection: "fake",
        file: "i-index.json",
      }),
      (e: unknown) =>
        e instanceof MigrationFailure &&
        e.message === 'connection "fake", file i-index.json, HEAD /i, HTTP 500: x_exception: why',
    );
  });
});

/**
 * Elasticsearch's ILM policy API (the OSS build on Maven Central has no ILM, so this stands in):
 * a PUT creates or replaces the policy, with no sequence numbers (200, `acknowledged`); a GET
 * answers it keyed by its id with the version ILM counts, or 404 `resource_not_found_exception`.
 */
function fakeIlm(log: string[]): Transport & { policies: Map<string, unknown> } {
  const policies = new Map<string, unknown>();
  const versions = new Map<string, number>();
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status });
  return {
    policies,
    close() {},
    fetch: (url, init) => {
      log.push(`${init.method} ${url.pathname}${url.search}`);
      const id = decodeURIComponent(url.pathname.replace("/_ilm/policy/", ""));
      if (init.method === "GET") {
        return Promise.resolve(
          policies.has(id)
            ? json(200, {
              [id]: {
                version: versions.get(id),
                modified_date: "2026-11-25T00:00:00.000Z",
                policy: policies.get(id),
              },
            })
            : json(404, {
              error: {
                type: "resource_not_found_exception",
                reason: `Lifecycle policy not found: ${id}`,
              },
            }),
        );
      }
      policies.set(id, (JSON.parse(String(init.body)) as { policy: unknown }).policy);
      versions.set(id, (versions.get(id) ?? 0) + 1);
      return Promise.resolve(json(200, { acknowledged: true }));
    },
  };
}

describe("applyRequest: ILM policies (Elasticsearch)", () => {
  it("creates a policy with phases, then replaces it, and says when managed indices take it", async () => {
    const log: string[] = [];
    const ilm = fakeIlm(log);
    const client = new SearchClient(connection, ilm);
    const where = { connection: "fake", file: "logs-policy.json" };
    const v1 = { phases: { delete: { min_age: "30d", actions: { delete: {} } } } };
    const created = await applyRequest(client, planRequest("logs-policy.json", bytes(v1)), where);
    assert.equal(created.result, "created");
    assert.equal(created.notice, undefined);
    const v2 = { phases: { delete: { min_age: "7d", actions: { delete: {} } } } };
    const updated = await applyRequest(
      client,
      planRequest("logs-policy.json", bytes({ policy: v2 })),
      where,
    );
    assert.equal(updated.result, "updated");
    assert.match(
      updated.notice!,
      /policy "logs" updated: an index it manages may finish its current phase/,
    );
    assert.deepEqual(ilm.policies.get("logs"), v2);
    assert.deepEqual(log, [
      "GET /_ilm/policy/logs",
      "PUT /_ilm/policy/logs",
      "GET /_ilm/policy/logs",
      "PUT /_ilm/policy/logs",
    ]);
  });
});

describe("applyRequest: a refused policy whose GET / fails too", () => {
  it("keeps the cluster's own reason for the refusal, whatever GET / does", async () => {
    const refusal = {
      error: { type: "x_content_parse_exception", reason: "unknown field [hott]" },
    };
    for (const root of ["refused", "503"] as const) {
      const sent: string[] = [];
      const transport: Transport = {
        close() {},
        fetch: (url, init) => {
          sent.push(`${init.method} ${url.pathname}`);
          if (url.pathname === "/") {
            return root === "refused"
              ? Promise.reject(new TypeError("connection refused"))
              : Promise.resolve(new Response("busy", { status: 503 }));
          }
          if (init.method === "GET") {
            return Promise.resolve(
              new Response('{"error":{"type":"resource_not_found_exception"}}', {
                status: 404,
              }),
            );
          }
          return Promise.resolve(new Response(JSON.stringify(refusal), { status: 400 }));
        },
      };
      const client = new SearchClient(connection, transport);
      const policy = { phases: { hott: {} } };
      await assert.rejects(
        applyRequest(client, planRequest("p-policy.json", bytes(policy)), {
          connection: "fake",
          file: "p-policy.json",
        }),
        (error: unknown) => {
          assert.ok(error instanceof MigrationFailure, `${root}: ${error}`);
          assert.equal(error.detail.request, "PUT /_ilm/policy/p");
          assert.equal(error.detail.status, 400);
          assert.match(error.detail.reason, /unknown field \[hott\]/);
          return true;
        },
      );
      assert.ok(sent.includes("GET /"), root);
    }
  });
});

describe("an ILM policy on the real node", () => {
  it("on OpenSearch names the API it takes; on Elasticsearch without ILM says it has none", async () => {
    const cluster = await distribution();
    await using ws = await Workspace.create();
    await ws.file("p-policy.json", {
      policy: { phases: { delete: { min_age: "1d", actions: { delete: {} } } } },
    });
    const run = await ws.run();
    assert.equal(run.code, 1);
    assert.match(
      run.err,
      cluster.name === "elasticsearch"
        ? /file p-policy\.json, (GET|PUT) \/_ilm\/policy\/p, HTTP 4\d\d: Elasticsearch 7\.10\.2 has no ILM \(its OSS build has none\)/
        : /this is an ILM policy .*but the cluster is OpenSearch/,
    );
  });
});

describe("a policy for the other API than the cluster's, on the real node", () => {
  it("fails naming what the cluster is (read from GET /) and the policy it takes", async () => {
    const cluster = await distribution();
    // The kind of policy this cluster does not take: ISM's on Elasticsearch, ILM's on OpenSearch.
    const other = cluster.name === "elasticsearch"
      ? { policy: { default_state: "hot", states: [] } }
      : { policy: { phases: { delete: { min_age: "1d", actions: { delete: {} } } } } };
    await using ws = await Workspace.create();
    await ws.file("p-policy.json", other);
    const run = await ws.run();
    assert.equal(run.code, 1);
    const [kind, wanted] = cluster.name === "elasticsearch" ? ["ISM", "ILM"] : ["ILM", "ISM"];
    assert.match(
      run.err,
      new RegExp(
        `file p-policy\\.json, (GET|PUT) \\S+, HTTP 4\\d\\d: this is an ${kind} policy .*but the ` +
          `cluster is ${cluster.name === "elasticsearch" ? "Elasticsearch" : "OpenSearch"} ` +
          `${cluster.version.replaceAll(".", "\\.")}, whose policies are ${wanted}'s`,
      ),
    );
  });
});
