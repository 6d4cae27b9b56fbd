// A @ConfigurationProperties class's fields are checked against its schema's output: this file is
// checked by `tsc` (tests/types/tsconfig.json, the build's strict settings) and by `deno check`.
// Each wrong class carries `@ts-expect-error`, so the check fails if the compiler stops refusing
// it. The test at the end binds the correct classes, so the types are those the values have.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { bootstrap, ConfigurationProperties } from "../../mod.ts";

const Mail = z.object({
  host: z.string(),
  port: z.coerce.number().default(25),
  tls: z.boolean().optional(),
});

@ConfigurationProperties("mail", Mail)
class MailSettings {
  host!: string;
  port!: number;
  tls?: boolean;
  // Methods are no fields: the schema need not give them.
  address(): string {
    return `${this.host}:${this.port}`;
  }
}

// A getter computes from the fields: no field the schema must give.
@ConfigurationProperties("mail", Mail)
class MailAddress {
  host!: string;
  get address(): string {
    return `smtp://${this.host}`;
  }
}

// Fewer fields than the schema gives, and wider types, take what the schema gives.
@ConfigurationProperties("mail", Mail)
class MailHost {
  host!: string | undefined;
}

// @ts-expect-error port is a number once the schema converted it, not text
@ConfigurationProperties("mail", Mail)
class PortAsText {
  host!: string;
  port!: string;
}

// @ts-expect-error the schema gives no user
@ConfigurationProperties("mail", Mail)
class WithUser {
  host!: string;
  user!: string;
}

// @ts-expect-error tls may be missing: a field that must be there is not what the schema gives
@ConfigurationProperties("mail", Mail)
class TlsRequired {
  tls!: boolean;
}

describe("@ConfigurationProperties types", () => {
  it("binds the classes the compiler accepts", async () => {
    const app = await bootstrap({
      components: [MailSettings, MailHost, MailAddress],
      config: { mail: { host: "smtp" } },
    });
    assert.equal(app.getBean(MailSettings).address(), "smtp:25");
    assert.equal(app.getBean(MailHost).host, "smtp");
    assert.equal(app.getBean(MailAddress).address, "smtp://smtp");
    // The refused classes still decorate at run time; only the compiler tells them apart.
    assert.deepEqual([PortAsText, WithUser, TlsRequired].map((c) => c.name), [
      "PortAsText",
      "WithUser",
      "TlsRequired",
    ]);
  });
});
