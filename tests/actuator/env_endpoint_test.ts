import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { bootstrap } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
import { loadConfig } from "../../config.ts";
import { envReport } from "../../src/actuator/env_endpoint.ts";
import { resolveConfig } from "../../src/config/application_config.ts";
import { tempDir } from "../temp_dir.ts";

type App = { fetch(r: Request): Response | Promise<Response>; close(): Promise<void> };

async function get(app: App, path: string) {
  const response = await app.fetch(new Request(`http://localhost${path}`));
  const text = await response.text();
  return { status: response.status, text, body: response.status === 200 ? JSON.parse(text) : null };
}

const SECRETS = ["s3cret-pw", "tok-123456", "file-held-secret", "url-pass"];

// A file, its profile's file and its `${file:}` secret in a folder of their own.
async function withFiles<T>(
  files: Record<string, string>,
  run: (dir: string) => Promise<T>,
): Promise<T> {
  await using dir = await tempDir("thaw-env-");
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir.path, name), text);
  return await run(dir.path);
}

const FILES = {
  "application.yml": [
    "server:",
    "  hostname: 127.0.0.1",
    "management:",
    "  endpoint:",
    "    env:",
    "      show-values: ${SHOW:never}",
    "  endpoints:",
    "    web:",
    "      exposure:",
    "        include: env,health",
    "app:",
    "  greeting: hello",
    "  hosts: [a.example, b.example]",
    "  db:",
    "    url: postgres://app:url-pass@db:5432/shop",
    "    password: s3cret-pw",
    "  api-token: tok-123456",
    "  held: ${file:held}",
    "",
  ].join("\n"),
  "application-prod.yml": "app:\n  greeting: hello from prod\n",
  "held": "file-held-secret\n",
};

// The app of the files in `dir`, values shown.
async function shownApp(dir: string, extra = "", profiles?: string): Promise<App> {
  const file = join(dir, "application.yml");
  if (extra !== "") await writeFile(file, FILES["application.yml"] + extra);
  const config = await loadConfig(file, {
    env: { SHOW: "always" },
    ...(profiles === undefined ? {} : { profiles }),
  });
  return await bootstrap({ actuator: actuator(), config });
}

function values(body: { propertySources: { properties: Record<string, { value: unknown }> }[] }) {
  return body.propertySources.flatMap((s) => Object.values(s.properties).map((p) => p.value));
}

describe("GET /actuator/env", () => {
  it("answers 404 unless exposure names it, and when exclude takes it out", async () => {
    for (
      const exposure of [{ include: "health,info" }, { include: "*", exclude: "env" }, {}]
    ) {
      const app = await bootstrap({
        actuator: actuator(),
        config: {
          app: { greeting: "hi" },
          management: { endpoints: { web: { exposure } } },
        },
      });
      assert.equal((await get(app, "/actuator/env")).status, 404, JSON.stringify(exposure));
      assert.equal((await get(app, "/actuator/env/app.greeting")).status, 404);
      await app.close();
    }
  });

  it("lists each source's keys, the environment's first, every value masked by default", async () => {
    await withFiles(FILES, async (dir) => {
      const file = join(dir, "application.yml");
      const prod = join(dir, "application-prod.yml");
      const config = await loadConfig(file, { env: { SERVER_PORT: "9090" }, profiles: "prod" });
      const app = await bootstrap({ actuator: actuator(), config });
      const { status, text, body } = await get(app, "/actuator/env");
      assert.equal(status, 200);
      const at = (line: number) => `${file}:${line}`;
      assert.deepEqual(body, {
        activeProfiles: ["prod"],
        defaultProfiles: ["default"],
        propertySources: [
          {
            name: "environment variables",
            properties: {
              "server.port": { value: "******", origin: "environment variable SERVER_PORT" },
            },
          },
          {
            name: prod,
            properties: { "app.greeting": { value: "******", origin: `${prod}:2` } },
          },
          {
            name: file,
            properties: {
              "server.hostname": { value: "******", origin: at(2) },
              "management.endpoint.env.show-values": { value: "******", origin: at(6) },
              "management.endpoints.web.exposure.include": { value: "******", origin: at(10) },
              "app.hosts[0]": { value: "******", origin: at(13) },
              "app.hosts[1]": { value: "******", origin: at(13) },
              "app.db.url": { value: "******", origin: at(15) },
              "app.db.password": { value: "******", origin: at(16) },
              "app.api-token": { value: "******", origin: at(17) },
              "app.held": { value: "******", origin: at(18) },
            },
          },
        ],
      });
      for (const secret of [...SECRETS, "hello", "9090"]) assert.ok(!text.includes(secret), secret);
      await app.close();
    });
  });

  it("shows values with show-values: always, but never a secret key's, a ${file:} value or a URL's credentials", async () => {
    const secretKeys = [
      "db_password",
      "accessToken",
      "client-secret",
      "smtppass",
      "pwd",
      "pw",
      "auth",
      "authorization",
      "key",
      "private-key",
      "apiKey",
      "access-key",
      "credentials",
      "aws-credentials",
      "signing-token",
    ];
    const extra = "  copy: the password is s3cret-pw\n" +
      "  numbers:\n    password: 123456\n    auth: true\n" +
      "  secrets:\n" + secretKeys.map((k) => `    ${k}: sec-${k}-value\n`).join("") +
      "  endpoints:\n" +
      "    - http://user:url-pass@one.example/x\n" +
      "    - https://two.example/?token=url-pass&x=1\n" +
      "  file-in-text: prefix-${file:held}-suffix\n";
    await withFiles(FILES, async (dir) => {
      const app = await shownApp(dir, extra);
      const shown = await get(app, "/actuator/env");
      assert.equal(shown.status, 200);
      const props = shown.body.propertySources.at(-1).properties;
      assert.equal(props["server.hostname"].value, "127.0.0.1");
      assert.equal(props["management.endpoint.env.show-values"].value, "always");
      assert.equal(props["app.greeting"].value, "hello");
      assert.equal(props["app.hosts[1]"].value, "b.example");
      assert.equal(props["app.db.password"].value, "******");
      assert.equal(props["app.api-token"].value, "******");
      assert.equal(props["app.held"].value, "******");
      assert.equal(props["app.file-in-text"].value, "******");
      assert.equal(props["app.db.url"].value, "postgres://***@db:5432/shop");
      assert.equal(props["app.copy"].value, "the password is ***");
      assert.equal(props["app.numbers.password"].value, "******");
      assert.equal(props["app.numbers.auth"].value, "******");
      assert.equal(props["app.endpoints[0]"].value, "http://***@one.example/x");
      assert.equal(props["app.endpoints[1]"].value, "https://two.example/?token=***&x=1");
      for (const k of secretKeys) assert.equal(props[`app.secrets.${k}`]?.value, "******", k);
      for (const secret of SECRETS) assert.ok(!shown.text.includes(secret), secret);
      assert.ok(!shown.text.includes('"sec-'), "a secret key's value");
      const { _links } = (await get(app, "/actuator")).body;
      assert.equal(_links.env.href, "http://localhost/actuator/env");
      await app.close();
    });
  });

  it("answers one property, in Spring's shape, and 404 for a key no source holds", async () => {
    await withFiles(FILES, async (dir) => {
      const file = join(dir, "application.yml");
      const prod = join(dir, "application-prod.yml");
      const app = await shownApp(dir, "", "prod");
      assert.deepEqual((await get(app, "/actuator/env/app.greeting")).body, {
        property: { source: prod, value: "hello from prod" },
        activeProfiles: ["prod"],
        defaultProfiles: ["default"],
        propertySources: [
          { name: prod, property: { value: "hello from prod", origin: `${prod}:2` } },
          { name: file },
        ],
      });
      const one = await get(app, "/actuator/env/app.db.password");
      assert.deepEqual(one.body.property, { source: file, value: "******" });
      assert.equal(
        (await get(app, "/actuator/env/app.hosts%5B0%5D")).body.property.value,
        "a.example",
      );
      assert.equal((await get(app, "/actuator/env/app.held")).body.property.value, "******");
      assert.equal((await get(app, "/actuator/env/app.nothing")).status, 404);
      assert.equal((await get(app, "/actuator/env/app.db")).status, 404);
      await app.close();
    });
  });

  it("refuses when-authorized, naming the key: Thaw has no roles to authorize", async () => {
    for (
      const [value, expected] of [
        ["when-authorized", /^config: management\.endpoint\.env\.show-values: when-authorized /],
        ["sometimes", /^config: management\.endpoint\.env\.show-values must be /],
      ] as const
    ) {
      await assert.rejects(
        bootstrap({
          actuator: actuator(),
          config: {
            management: {
              endpoints: { web: { exposure: { include: "env" } } },
              endpoint: { env: { "show-values": value } },
            },
          },
        }),
        (e: Error) => {
          assert.equal(e.name, "ConfigError");
          assert.match(e.message, expected);
          return true;
        },
      );
    }
  });

  it("answers valid JSON for hostile keys and values, and still masks what they hold", async () => {
    const long = "x".repeat(200_000);
    const hostile = JSON.parse(
      '{"app": {"__proto__": {"polluted": "yes"}, "line\\nbreak": "a\\u0000b\\u001bc", ' +
        '"lone": "\\ud800", "sep\\u2028name": "v\\u2029", "x\\u0007password": "bell-secret-1"}}',
    );
    hostile.app.long = long;
    hostile.app["long-secret"] = "s".repeat(100_000);
    for (const show of ["never", "always"]) {
      const app = await bootstrap({
        actuator: actuator(),
        config: {
          ...hostile,
          management: {
            endpoints: { web: { exposure: { include: "env" } } },
            endpoint: { env: { "show-values": show } },
          },
        },
      });
      const { status, text, body } = await get(app, "/actuator/env");
      assert.equal(status, 200);
      const props = body.propertySources[0].properties;
      const shown = (v: string) => show === "never" ? "******" : v;
      // Dropped as the file is read, as from a file: never the prototype of anything.
      assert.ok(Object.keys(props).every((k) => !k.includes("__proto__") && k !== "polluted"));
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(props["app.line\nbreak"].value, shown("a\u0000b\u001bc"));
      assert.equal(props["app.lone"].value, shown("\ud800"));
      assert.equal(props["app.sep\u2028name"].value, shown("v\u2029"));
      assert.equal(props["app.long"].value, shown(long));
      assert.equal(props["app.x\u0007password"].value, "******");
      assert.equal(props["app.long-secret"].value, "******");
      assert.ok(!text.includes("s".repeat(1000)));
      assert.ok(!text.includes("bell-secret-1"));
      if (show === "never") assert.ok(values(body).every((v) => v === "******"));
      await app.close();
    }
  });
});

describe("envReport", () => {
  it("names a configuration object's source config, with no origin where no line is known", () => {
    const config = resolveConfig({ app: { n: 1, off: null, list: [] } }, () => undefined);
    assert.deepEqual(envReport(config, "always"), {
      activeProfiles: [],
      defaultProfiles: ["default"],
      propertySources: [{
        name: "config",
        properties: {
          "app.n": { value: 1 },
          "app.off": { value: null },
          "app.list": { value: [] },
        },
      }],
    });
  });
});
