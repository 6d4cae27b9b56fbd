import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { checkReport } from "../../report_shape.ts";
import { runCaptured } from "../../run_cli.ts";
import type { RunReport } from "../../../../src/migrate/run_report.ts";
import {
  runtimeTransport,
  type TransportFactory,
} from "../../../../src/migrate/search/http/transport.ts";
import {
  type AuthReceived,
  type AuthServer,
  SIGNATURE_MISMATCH,
  startAuthServer,
} from "../auth_server.ts";
import { OPENSEARCH_URL, os, Workspace } from "../cluster.ts";
import { freePort } from "../servers.ts";

// Managed clusters (issue 21, part 3): every request of a run, records, lock and files alike,
// reaches the real node through a server that checks its authentication as the managed service
// would, and no secret is ever printed.

const KEY_ID = "AKIATHAWTESTKEY00001";
const SECRET = "thaw/Test+Secret0000000000000000000000000";
/** The standard AWS variables of the run, holding the test's key pair. */
const AWS_ENV_KEYS = {
  AWS_REGION: "eu-west-1",
  AWS_ACCESS_KEY_ID: KEY_ID,
  AWS_SECRET_ACCESS_KEY: SECRET,
};
const TOKEN = "IQoJb3JpZ2luX2VjTHAWtestSESSIONtoken/+==";
const OTHER_ID = "AKIATHAWTESTKEY00002";
const OTHER_SECRET = "other/Test+Secret000000000000000000000000";
/** Temporary credentials from the environment, as an AWS role gives them. */
const SESSION_ENV = {
  AWS_REGION: "eu-west-1",
  AWS_ACCESS_KEY_ID: OTHER_ID,
  AWS_SECRET_ACCESS_KEY: OTHER_SECRET,
  AWS_SESSION_TOKEN: TOKEN,
};
const API_KEY = "VGhhd0FwaUtleTpzM2NyM3QtdmFsdWU=";
const BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0aGF3In0.ThawBearerSig-_";

/** One run: exit code, output, the `--json` report when asked, and each attempt's host. */
interface AuthRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  readonly report?: RunReport;
  /** `host` of every attempt the transport made, in order, with its Authorization header. */
  readonly attempts: { host: string; authorization?: string }[];
}

async function run(
  ws: Workspace,
  env: Record<string, string>,
  ...args: string[]
): Promise<AuthRun> {
  const attempts: AuthRun["attempts"] = [];
  const transport: TransportFactory = async (options) => {
    const inner = await runtimeTransport(options);
    return {
      fetch: (url, init) => {
        const headers = init.headers as Record<string, string>;
        attempts.push({ host: url.host, authorization: headers.authorization });
        return inner.fetch(url, init);
      },
      close: () => inner.close(),
    };
  };
  const captured = await runCaptured(
    ["-m", "search", "-c", ws.configDir, "--sqlPath", ws.root, ...args],
    { env: (name) => env[name], transport },
  );
  if (!args.includes("--json")) return { ...captured, attempts };
  const report = JSON.parse(captured.out);
  checkReport(report);
  return { ...captured, report, attempts };
}

/** Fails if any form of any secret is in what the run printed. */
function assertNoSecret(r: AuthRun, secrets: readonly string[]): void {
  const printed = `${r.out}\n${r.err}`;
  for (const s of secrets) {
    for (const form of [s, encodeURIComponent(s), JSON.stringify(s).slice(1, -1)]) {
      assert.ok(!printed.includes(form), `${form} printed:\n${printed}`);
    }
  }
}

/**
 * Files that make every kind of request: an index (HEAD, then PUT), a template, a POST envelope
 * (sent once: its body goes as a stream), and a PUT of a document whose id is percent-encoded.
 */
async function files(ws: Workspace): Promise<{ docPath: string }> {
  const docPath = `/${ws.id}-docs/_doc/caf%C3%A9(1)!*'~%2Bx?refresh=true`;
  await ws.file(`1.0/${ws.id}-docs-index.json`, { settings: { number_of_replicas: 0 } });
  await ws.file(`1.0/${ws.id}-template.json`, { index_patterns: [`${ws.id}-t*`], template: {} });
  await ws.file("1.1/001-post.json", {
    method: "POST",
    path: `/${ws.id}-docs/_doc?refresh=true`,
    body: { title: "naïve café", n: 1 },
  });
  await ws.file("1.1/002-put.json", { method: "PUT", path: docPath, body: { title: "é" } });
  return { docPath };
}

function sigv4Settings(service: string, lines = ""): string {
  return `    aws_sigv4:\n      region: \${AWS_REGION}\n      service: ${service}\n${lines}`;
}

async function assertApplied(ws: Workspace): Promise<void> {
  const doc = await os("GET", `/${ws.id}-docs/_doc/${encodeURIComponent("café(1)!*'~+x")}`);
  assert.equal(doc.status, 200, JSON.stringify(doc.body));
  await os("POST", `/${ws.id}-docs/_refresh`);
  assert.equal((await os("GET", `/${ws.id}-docs/_count`)).body.count, 2);
  assert.equal((await os("GET", `/_index_template/${ws.id}`)).status, 200);
}

function assertAllVerified(received: readonly AuthReceived[], from: number): AuthReceived[] {
  const mine = received.slice(from);
  assert.ok(mine.length > 5, `only ${mine.length} request(s)`);
  for (const r of mine) assert.equal(r.refused, undefined, `${r.method} ${r.path}: ${r.refused}`);
  return mine;
}

describe("aws_sigv4 through a server that checks every signature", () => {
  const servers = new Map<string, AuthServer>();
  before(async () => {
    for (const service of ["es", "aoss"]) {
      servers.set(
        service,
        await startAuthServer(OPENSEARCH_URL, {
          sigv4: {
            region: "eu-west-1",
            service,
            keys: new Map([
              [KEY_ID, { secretAccessKey: SECRET }],
              [OTHER_ID, { secretAccessKey: OTHER_SECRET, sessionToken: TOKEN }],
            ]),
          },
        }),
      );
    }
  });
  after(async () => {
    for (const s of servers.values()) await s.close();
  });

  for (const service of ["es", "aoss"]) {
    it(`${service}, credentials from the environment: a full migrate succeeds, every request verified`, async () => {
      const server = servers.get(service)!;
      await using ws = await Workspace.create({
        hosts: [server.url],
        settings: sigv4Settings(service),
      });
      const { docPath } = await files(ws);
      const from = server.received.length;
      const first = await run(ws, AWS_ENV_KEYS);
      assert.equal(first.code, 0, `${first.out}\n${first.err}`);
      const mine = assertAllVerified(server.received, from);
      const post = mine.find((r) =>
        r.method === "POST" && r.path === `/${ws.id}-docs/_doc?refresh=true`
      );
      assert.ok(post, "the POST envelope");
      assert.equal(post.body, JSON.stringify({ title: "naïve café", n: 1 }));
      assert.ok(
        mine.some((r) => r.method === "PUT" && r.path === docPath),
        "the percent-encoded path, as written",
      );
      assert.ok(mine.some((r) => r.method === "HEAD"), "a HEAD");
      assert.ok(mine.every((r) => r.headers["x-amz-security-token"] === undefined));
      await assertApplied(ws);
      // Unchanged: one verified read of the records, nothing applied.
      const again = await run(ws, AWS_ENV_KEYS, "--json");
      assert.equal(again.code, 0, again.out);
      assert.equal(again.report!.connections[0].applied, 0);
      assertAllVerified(server.received, from);
      assertNoSecret(first, [KEY_ID, SECRET]);
      assertNoSecret(again, [KEY_ID, SECRET]);
    });

    it(`${service}, temporary credentials from the config: signed with the session token`, async () => {
      const server = servers.get(service)!;
      await using ws = await Workspace.create({
        hosts: [server.url],
        settings: sigv4Settings(
          service,
          "      access_key_id: ${ID}\n      secret_access_key: ${SECRET}\n" +
            "      session_token: ${TOKEN}\n",
        ),
      });
      await files(ws);
      const env = { AWS_REGION: "eu-west-1", ID: OTHER_ID, SECRET: OTHER_SECRET, TOKEN };
      const from = server.received.length;
      const r = await run(ws, env, "--json");
      assert.equal(r.code, 0, r.out);
      assert.equal(r.report!.connections[0].applied, 4);
      const mine = assertAllVerified(server.received, from);
      assert.ok(mine.every((x) => x.headers["x-amz-security-token"] === TOKEN));
      await assertApplied(ws);
      assertNoSecret(r, [OTHER_ID, OTHER_SECRET, TOKEN]);
    });
  }

  // Deno and Bun send through node:http for ssl_verification: false (Node always does without a
  // proxy): every signed header must get through it as well.
  it("through the node:http transport (ssl_verification: false): every request verified", async () => {
    const server = servers.get("es")!;
    await using ws = await Workspace.create({
      hosts: [server.url],
      settings: `    ssl_verification: false\n${sigv4Settings("es")}`,
    });
    await files(ws);
    const env = SESSION_ENV;
    const from = server.received.length;
    const r = await run(ws, env);
    assert.equal(r.code, 0, `${r.out}\n${r.err}`);
    assertAllVerified(server.received, from);
    await assertApplied(ws);
  });

  it("a wrong secret: 403 from the service, a clear failure, the secret in no output", async () => {
    const server = servers.get("es")!;
    await using ws = await Workspace.create({ hosts: [server.url], settings: sigv4Settings("es") });
    await files(ws);
    const wrong = "wrong/Secret+Value0000000000000000000000";
    const env = {
      AWS_REGION: "eu-west-1",
      AWS_ACCESS_KEY_ID: KEY_ID,
      AWS_SECRET_ACCESS_KEY: wrong,
    };
    const from = server.received.length;
    const runs = [await run(ws, env), await run(ws, env, "--json")];
    for (const r of runs) {
      assert.equal(r.code, 1, r.out);
      assertNoSecret(r, [KEY_ID, wrong, SECRET]);
      assert.match(`${r.out}\n${r.err}`, /403/);
      assert.ok(`${r.out}\n${r.err}`.includes(SIGNATURE_MISMATCH.message), r.out);
    }
    assert.ok(server.received.slice(from).every((x) => x.refused === "signature mismatch"));
    assert.match(runs[1].report!.error!.message, /403/);
    // Nothing was applied.
    assert.equal((await os("HEAD", `/${ws.id}-docs`)).status, 404);
  });

  it("an unknown key, and a 403 body echoing the Authorization header: masked", async () => {
    const echo = await startAuthServer(OPENSEARCH_URL, {
      answer: (r) => ({
        status: 403,
        body: {
          message:
            `User: arn:aws:sts::1:assumed-role/x is not authorized (${r.headers.authorization}` +
            ` token=${r.headers["x-amz-security-token"]})`,
        },
      }),
    });
    try {
      await using ws = await Workspace.create({ hosts: [echo.url], settings: sigv4Settings("es") });
      await files(ws);
      const env = SESSION_ENV;
      for (const r of [await run(ws, env), await run(ws, env, "--json")]) {
        assert.equal(r.code, 1, r.out);
        assert.match(
          `${r.out}\n${r.err}`,
          /is not authorized \(AWS4-HMAC-SHA256 Credential=\*\*\*\//,
        );
        assertNoSecret(r, [OTHER_ID, OTHER_SECRET, TOKEN]);
      }
      assert.ok(echo.received.every((x) => x.headers["x-amz-security-token"] === TOKEN));
    } finally {
      await echo.close();
    }
  });

  it("two hosts, the first refusing connections: the attempt on the second is signed for it", async () => {
    const server = servers.get("es")!;
    const dead = `127.0.0.1:${await freePort()}`;
    await using ws = await Workspace.create({
      hosts: [`http://${dead}`, server.url],
      settings: sigv4Settings("es"),
    });
    await files(ws);
    const from = server.received.length;
    const r = await run(ws, AWS_ENV_KEYS);
    assert.equal(r.code, 0, `${r.out}\n${r.err}`);
    assertAllVerified(server.received, from);
    const live = new URL(server.url).host;
    assert.deepEqual(r.attempts.slice(0, 2).map((a) => a.host), [dead, live]);
    assert.notEqual(r.attempts[0].authorization, r.attempts[1].authorization);
    await assertApplied(ws);
  });
});

describe("api_key and bearer_token, as a recording server sees them", () => {
  let server: AuthServer;
  before(async () => {
    server = await startAuthServer(OPENSEARCH_URL);
  });
  after(() => server.close());

  const cases = [
    { key: "api_key", value: API_KEY, header: `ApiKey ${API_KEY}` },
    { key: "bearer_token", value: BEARER, header: `Bearer ${BEARER}` },
  ];
  for (const c of cases) {
    it(`${c.key}: every request carries exactly "${c.header.split(" ")[0]} <value>"`, async () => {
      await using ws = await Workspace.create({
        hosts: [server.url],
        settings: `    ${c.key}: \${SECRET}\n`,
      });
      await files(ws);
      const from = server.received.length;
      const runs = [
        await run(ws, { SECRET: c.value }),
        await run(ws, { SECRET: c.value }, "--json"),
      ];
      for (const r of runs) {
        assert.equal(r.code, 0, `${r.out}\n${r.err}`);
        assertNoSecret(r, [c.value]);
      }
      const mine = server.received.slice(from);
      assert.ok(mine.length > 5);
      for (const r of mine) {
        assert.equal(r.headers.authorization, c.header, `${r.method} ${r.path}`);
        assert.equal(r.headers["x-amz-date"], undefined);
      }
      await assertApplied(ws);
    });

    it(`${c.key}: a 401 whose body echoes the Authorization header shows no secret`, async () => {
      const echo = await startAuthServer(OPENSEARCH_URL, {
        answer: (r) =>
          r.method === "HEAD" ? "forward" : {
            status: 401,
            body: {
              error: {
                root_cause: [{
                  type: "security_exception",
                  reason: `bad ${r.headers.authorization}`,
                }],
                type: "security_exception",
                reason: `unable to authenticate with [${r.headers.authorization}]`,
              },
              status: 401,
            },
          },
      });
      try {
        await using ws = await Workspace.create({
          hosts: [echo.url],
          settings: `    ${c.key}: \${SECRET}\n`,
        });
        await files(ws);
        for (
          const r of [
            await run(ws, { SECRET: c.value }),
            await run(ws, { SECRET: c.value }, "--json"),
          ]
        ) {
          assert.equal(r.code, 1, r.out);
          assert.match(`${r.out}\n${r.err}`, /401/);
          assert.match(
            `${r.out}\n${r.err}`,
            /unable to authenticate with \[(ApiKey|Bearer) \*\*\*\]/,
          );
          assertNoSecret(r, [c.value]);
        }
      } finally {
        await echo.close();
      }
    });
  }

  it("config errors with secret values: exit 2, no value in any output", async () => {
    const secret = "Hid-Auth-Secret-Value-42";
    const cases: [string, RegExp][] = [
      [
        `    api_key: \${SECRET}\n    bearer_token: ${secret}b\n`,
        /bearer_token: bearer_token and api_key are both given/,
      ],
      [
        "    api_key: ${SECRET}\n",
        /api_key \(from environment variable SECRET\) must be printable ASCII/,
      ],
      [`    aws_sigv4: '${secret}'\n`, /aws_sigv4 must be a mapping/],
      [
        `    aws_sigv4: { region: eu-west-1, access_key_id: ${secret} }\n`,
        /secret_access_key is missing/,
      ],
      ["    aws_sigv4: { region: eu-west-1 }\n", /has no credentials/],
      [`    aws_sigv4: { region: eu-west-1, service: ${secret} }\n`, /service must be es/],
    ];
    for (const [settings, says] of cases) {
      await using ws = await Workspace.create({ hosts: [server.url], settings });
      const env = { SECRET: `${secret}\n` };
      for (const r of [await run(ws, env), await run(ws, env, "--json")]) {
        assert.equal(r.code, 2, `${settings}\n${r.out}\n${r.err}`);
        assert.match(`${r.out}\n${r.err}`, says);
        assert.match(`${r.out}\n${r.err}`, /application\.yml:\d+: search\[0\]\./);
        // The service is not a secret: shown, to say what was wrong. Every other case hides it.
        if (!settings.includes("service")) assertNoSecret(r, [secret]);
      }
    }
  });
});
