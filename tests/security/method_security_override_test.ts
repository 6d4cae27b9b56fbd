// Method security across a class hierarchy: the most derived declaration of a method decides. A
// subclass that overrides a method its superclass opened with `@PermitAll()`, and secures its
// override with `@Secured` or `@PreAuthorize`, is checked; one that opens an override of a
// secured method is open. Tried with a caller (runAs) and without one, as a bean's caller would.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { bootstrap, Service } from "../../mod.ts";
import { AccessDeniedError, PermitAll, PreAuthorize, Secured, security } from "../../security.ts";
import { runAs } from "../../src/security/security_context.ts";
import { exportSPKI, generateKeyPair } from "jose";
import { memoryLogger } from "../helpers.ts";

class Catalogue {
  @PermitAll()
  list(): string {
    return "public list";
  }

  @PermitAll()
  entry(id: string): string {
    return `public entry ${id}`;
  }

  @Secured("ROLE_ADMIN")
  stock(): string {
    return "stock";
  }
}

@Service()
class AdminCatalogue extends Catalogue {
  // The override is secured: the superclass's @PermitAll() on its own method no longer applies.
  @Secured("ROLE_ADMIN")
  override list(): string {
    return "SECRET admin list";
  }

  @PreAuthorize((caller, id: string) => caller.name === id)
  override entry(id: string): string {
    return `SECRET admin entry ${id}`;
  }

  // Opened by the subclass: it decides.
  @PermitAll()
  override stock(): string {
    return "open stock";
  }
}

const denied = (status: number) => (error: unknown) =>
  error instanceof AccessDeniedError && error.status === status;

describe("method security of overriding methods", () => {
  it("checks an override a subclass secured, though its superclass opened the method", async () => {
    const { publicKey } = await generateKeyPair("ES256", { extractable: true });
    const app = await bootstrap({
      components: [AdminCatalogue],
      config: {
        security: {
          oauth2: { resourceserver: { jwt: { "public-key": await exportSPKI(publicKey) } } },
        },
      },
      security: security(),
      logger: memoryLogger(),
    });
    try {
      const bean = app.getBean(AdminCatalogue);
      const guest = { name: "guest", authorities: ["SCOPE_read"], claims: {} };
      const admin = { name: "root", authorities: ["ROLE_ADMIN"], claims: {} };
      assert.throws(() => bean.list(), denied(401));
      assert.throws(() => runAs(guest, () => bean.list()), denied(403));
      assert.equal(runAs(admin, () => bean.list()), "SECRET admin list");
      assert.throws(() => bean.entry("guest"), denied(401));
      assert.throws(() => runAs(guest, () => bean.entry("root")), denied(403));
      assert.equal(runAs(guest, () => bean.entry("guest")), "SECRET admin entry guest");
      // The other way round: the subclass opened what its superclass secured.
      assert.equal(bean.stock(), "open stock");
    } finally {
      await app.close();
    }
  });
});
