import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { bootstrap, ConfigurationProperties } from "../../mod.ts";
import { actuator } from "../../actuator.ts";
// Declares the logging section's keys, as an app that imports it does: in one process with the
// other test files (Bun, Node) it is imported whatever this file does.
import "../../logging.ts";
import { configpropsReport } from "../../src/actuator/configprops_endpoint.ts";
import { readSettings } from "../../src/config/thaw_settings.ts";
import { resolveConfig } from "../../src/config/application_config.ts";

type App = { fetch(r: Request): Response | Promise<Response>; close(): Promise<void> };

async function get(app: App, path: string) {
  const response = await app.fetch(new Request(`http://localhost${path}`));
  const text = await response.text();
  return { status: response.status, text, body: response.status === 200 ? JSON.parse(text) : null };
}

@ConfigurationProperties(
  "mail",
  z.object({
    host: z.string(),
    password: z.string(),
    url: z.string(),
    port: z.coerce.number().default(25),
  }),
)
class MailSettings {
  host!: string;
  password!: string;
  url!: string;
  port!: number;
}

// A schema that takes the section as it is, whatever it holds.
const anything = {
  "~standard": {
    version: 1 as const,
    vendor: "test",
    validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
    types: undefined as unknown as { input: unknown; output: Record<string, unknown> },
  },
};

@ConfigurationProperties("weird", anything)
class Weird {}

function config(show: string, include = "configprops") {
  return {
    server: { port: 9090 },
    management: {
      endpoints: { web: { exposure: { include } } },
      endpoint: { configprops: { "show-values": show } },
    },
    mail: {
      host: "smtp.example",
      password: "mail-pw-1",
      url: "smtp://postman:mail-url-pw@smtp.example:587",
    },
  };
}

// Every leaf of a JSON value.
function leaves(value: unknown): unknown[] {
  if (typeof value !== "object" || value === null) return [value];
  return Object.values(value).flatMap(leaves);
}

describe("GET /actuator/configprops", () => {
  it("answers 404 unless exposure names it, and when exclude takes it out", async () => {
    for (
      const management of [
        { endpoints: { web: { exposure: { include: "health,env" } } } },
        { endpoints: { web: { exposure: { include: "*", exclude: "configprops" } } } },
        {},
      ]
    ) {
      const app = await bootstrap({ actuator: actuator(), config: { management } });
      assert.equal((await get(app, "/actuator/configprops")).status, 404);
      assert.equal((await get(app, "/actuator/configprops/server")).status, 404);
      await app.close();
    }
  });

  it("lists Thaw's sections and the app's @ConfigurationProperties, every value masked by default", async () => {
    const app = await bootstrap({
      actuator: actuator(),
      components: [MailSettings],
      config: config("never"),
    });
    const { status, text, body } = await get(app, "/actuator/configprops");
    assert.equal(status, 200);
    const beans = body.contexts.application.beans;
    // The sections of entry points this file does not import (Kafka, jobs, security) are listed
    // too when another test file of the same process (Bun's, Node's unit run) declared their keys.
    const own = Object.fromEntries(
      Object.entries(beans).filter(([k]) => !/^(kafka|jobs|security)(\.|$)/.test(k)),
    );
    assert.deepEqual(
      Object.keys(own).sort(),
      ["app", "app.openapi", "logging", "mailSettings", "management", "server", "thaw"],
    );
    assert.equal(beans.server.prefix, "server");
    assert.equal(beans.server.properties.port, "******");
    assert.equal(beans.server.properties.multipart["max-file-size"], "******");
    assert.deepEqual(beans.server.inputs.port, { value: "******" });
    assert.deepEqual(beans.mailSettings.prefix, "mail");
    assert.deepEqual(beans.mailSettings.properties, {
      host: "******",
      password: "******",
      url: "******",
      port: "******",
    });
    // (A prefix such as security.oauth2 holds a digit and no value: only this app's are checked.)
    assert.ok(
      leaves({ ...body, contexts: { application: { beans: own } } }).every((v) =>
        v === "******" || typeof v === "string" && !/\d/.test(v)
      ),
    );
    for (const shown of ["9090", "mail-pw-1", "mail-url-pw", "smtp.example", "0.0.0.0"]) {
      assert.ok(!text.includes(shown), shown);
    }
    await app.close();
  });

  it("shows values with show-values: always, defaults included, secrets and credentials still masked", async () => {
    const app = await bootstrap({
      actuator: actuator(),
      components: [MailSettings],
      config: config("always"),
    });
    const { text, body } = await get(app, "/actuator/configprops");
    const beans = body.contexts.application.beans;
    assert.equal(beans.server.properties.port, 9090);
    assert.equal(beans.server.properties.hostname, "0.0.0.0");
    assert.deepEqual(beans.server.inputs.port, { value: 9090 });
    assert.equal(beans.server.inputs.hostname, undefined);
    assert.equal(beans.management.properties.endpoint.configprops["show-values"], "always");
    assert.equal(beans.management.properties.endpoint.env["show-values"], "never");
    assert.deepEqual(beans.management.properties.endpoints.web.exposure.include, ["configprops"]);
    assert.deepEqual(beans.mailSettings, {
      prefix: "mail",
      properties: {
        host: "smtp.example",
        password: "******",
        url: "smtp://***@smtp.example:587",
        port: 25,
      },
      inputs: {
        host: { value: "smtp.example" },
        password: { value: "******" },
        url: { value: "smtp://***@smtp.example:587" },
      },
    });
    assert.ok(!text.includes("mail-pw-1") && !text.includes("mail-url-pw"));
    await app.close();
  });

  it("answers the beans under a prefix, and 404 where there are none", async () => {
    const app = await bootstrap({
      actuator: actuator(),
      components: [MailSettings],
      config: config("always"),
    });
    const mail = await get(app, "/actuator/configprops/mail");
    assert.deepEqual(Object.keys(mail.body.contexts.application.beans), ["mailSettings"]);
    const app2 = await get(app, "/actuator/configprops/app");
    assert.deepEqual(Object.keys(app2.body.contexts.application.beans).sort(), [
      "app",
      "app.openapi",
    ]);
    assert.equal((await get(app, "/actuator/configprops/nothing")).status, 404);
    await app.close();
  });

  it("refuses when-authorized, naming the key", async () => {
    await assert.rejects(bootstrap({ actuator: actuator(), config: config("when-authorized") }), {
      name: "ConfigError",
      message: /^config: management\.endpoint\.configprops\.show-values: when-authorized /,
    });
  });

  it("answers valid JSON for hostile keys and values, and still masks what they hold", async () => {
    const weird = JSON.parse(
      '{"nest": {"__proto__": {"polluted": "yes"}}, "line\\nbreak": "a\\u0000b\\u001bc", "lone": "\\ud800",' +
        ' "x\\u0007token": "bell-secret-1", "deep": {"api-key": "deep-secret-1"}}',
    );
    weird.long = "y".repeat(200_000);
    for (const show of ["never", "always"]) {
      const app = await bootstrap({
        actuator: actuator(),
        components: [Weird],
        config: { ...config(show), weird },
      });
      const { status, text, body } = await get(app, "/actuator/configprops/weird");
      assert.equal(status, 200);
      const { properties } = body.contexts.application.beans.weird;
      const shown = (v: string) => show === "never" ? "******" : v;
      // Dropped as the configuration is read: never the prototype of anything.
      assert.deepEqual(properties.nest, show === "never" ? "******" : {});
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(properties["line\nbreak"], shown("a\u0000b\u001bc"));
      assert.equal(properties.lone, shown("\ud800"));
      assert.equal(properties.long, shown("y".repeat(200_000)));
      assert.equal(properties["x\u0007token"], "******");
      assert.equal(properties.deep["api-key"], "******");
      assert.ok(!text.includes("bell-secret-1") && !text.includes("deep-secret-1"));
      await app.close();
    }
  });
});

describe("configpropsReport", () => {
  it("reads Thaw's settings as read, with their defaults, without an app", () => {
    const settings = readSettings(resolveConfig({ server: { port: "8081" } }, () => undefined));
    const report = configpropsReport(settings, [], "always");
    const server = report.contexts.application.beans.server;
    assert.equal(server.properties.port, 8081);
    assert.deepEqual(server.inputs, { port: { value: "8081" } });
  });
});
