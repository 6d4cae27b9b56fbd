// @Secured and @PreAuthorize on controllers and on any bean's methods: 403 (insufficient_scope
// where scopes decide) at the edge of a request, AccessDeniedError inside, refused without a
// caller (a @Scheduled run) unless @PermitAll(), and an @Async run that keeps its caller.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Autowired,
  bootstrap,
  GetMapping,
  PathVariable,
  RequestMapping,
  RestController,
  Scheduled,
  Service,
} from "../../mod.ts";
import { Async, tasks } from "../../tasks.ts";
import {
  AccessDeniedError,
  type Authentication,
  PreAuthorize,
  Secured,
  security,
  SecurityContext,
} from "../../security.ts";
import { runAs } from "../../src/security/security_context.ts";
import { memoryLogger } from "../helpers.ts";
import { deferred } from "../deferred.ts";
import { IssuerServer, type SigningKey, signingKey, token } from "./issuer_server.ts";
import { Accounts, Statements } from "../fixtures/secured_beans.ts";

@RestController()
@RequestMapping("/orders")
class Orders {
  @Autowired(Accounts)
  accounts!: Accounts;
  @Autowired(Statements)
  statements!: Statements;

  @GetMapping("/write")
  @Secured("SCOPE_orders:write")
  write(): string {
    return "written";
  }

  @GetMapping("/close/{id}", PathVariable("id"))
  close(id: string): string {
    return this.accounts.close(id);
  }

  @GetMapping("/statement/{owner}", PathVariable("owner"))
  statement(owner: string): Promise<string> {
    return this.statements.statement(owner);
  }

  @GetMapping("/mine/{owner}", PathVariable("owner"))
  @PreAuthorize((caller, owner: string) => caller.name === owner)
  mine(owner: string): string {
    return `mine ${owner}`;
  }
}

@Service()
class Nightly {
  @Autowired(Accounts)
  accounts!: Accounts;
  outcomes: string[] = [];

  @Scheduled({ cron: "0 3 * * *" })
  run(): void {
    try {
      this.outcomes.push(this.accounts.close("all"));
    } catch (error) {
      this.outcomes.push(
        error instanceof AccessDeniedError ? `denied ${error.status}` : String(error),
      );
    }
    this.outcomes.push(`count ${this.accounts.count()}`);
  }
}

describe("method security", () => {
  let key: SigningKey;
  let issuer: IssuerServer;
  before(async () => {
    key = await signingKey("k1");
    issuer = await IssuerServer.start([key]);
  });
  after(() => issuer.down());

  const start = () =>
    bootstrap({
      controllers: [Orders],
      components: [Accounts, Statements, Nightly],
      config: {
        security: {
          oauth2: {
            resourceserver: { jwt: { "issuer-uri": issuer.url, "roles-claim-name": "roles" } },
          },
        },
      },
      security: security(),
      logger: memoryLogger(),
    });
  const as = async (claims: Record<string, unknown>) => ({
    authorization: `Bearer ${await token(key, { iss: issuer.url, ...claims }, Date.now())}`,
  });

  it("refuses at the edge of a request: 403, insufficient_scope where scopes decide", async () => {
    const app = await start();
    const get = async (path: string, headers: Record<string, string>) =>
      await app.fetch(new Request(`http://localhost${path}`, { headers }));
    try {
      const reader = await as({ sub: "ann", scope: "orders:read" });
      const writer = await as({ sub: "ann", scope: "orders:write" });
      const admin = await as({ sub: "root", roles: ["ADMIN"] });

      const scoped = await get("/orders/write", reader);
      assert.equal(scoped.status, 403);
      assert.equal(
        scoped.headers.get("www-authenticate"),
        'Bearer error="insufficient_scope", scope="orders:write"',
      );
      assert.equal((await get("/orders/write", writer)).status, 200);

      // A bean's method called by the handler: a role decides, so no scope is named.
      const role = await get("/orders/close/9", reader);
      assert.equal(role.status, 403);
      assert.equal(role.headers.get("www-authenticate"), null);
      assert.doesNotMatch(await role.text(), /ROLE_ADMIN/);
      assert.equal(await (await get("/orders/close/9", admin)).text(), "closed 9");
      assert.equal(app.getBean(Accounts).calls, 1);

      // Checks given the method's arguments, sync on a handler, async on a bean.
      assert.equal((await get("/orders/mine/ann", reader)).status, 200);
      assert.equal((await get("/orders/mine/bob", reader)).status, 403);
      assert.equal(await (await get("/orders/statement/ann", reader)).text(), "statement of ann");
      assert.equal((await get("/orders/statement/bob", reader)).status, 403);
    } finally {
      await app.close();
    }
  });

  it("throws AccessDeniedError inside: no caller outside a request, nor in a @Scheduled run unless @PermitAll()", async () => {
    const app = await start();
    try {
      const accounts = app.getBean(Accounts);
      assert.throws(
        () => accounts.close("x"),
        (error: unknown) =>
          error instanceof AccessDeniedError && error.status === 401 && !error.caller &&
          error.message === "Access denied" && error.where === "Accounts.close()",
      );
      await assert.rejects(
        runAs(
          { name: "ann", authorities: [], claims: {} },
          () => app.getBean(Statements).statement("bob"),
        ),
        (error: unknown) => error instanceof AccessDeniedError && error.status === 403,
      );
      await app.scheduled({ cron: "0 3 * * *" });
      assert.deepEqual(app.getBean(Nightly).outcomes, ["denied 401", "count 0"]);
      assert.equal(accounts.calls, 0);
    } finally {
      await app.close();
    }
  });

  it("an @Async run keeps the caller of the call that queued it, and a refusal queues nothing", async () => {
    @Service()
    class Reports {
      readonly gate = deferred<void>();
      runs = 0;

      @Async()
      async hold(): Promise<void> {
        this.runs++;
        await this.gate.promise;
      }

      @Async()
      @Secured("SCOPE_reports")
      async who(): Promise<string | undefined> {
        this.runs++;
        await Promise.resolve();
        return SecurityContext.current()?.name;
      }
    }
    const app = await bootstrap({
      components: [Reports],
      config: {
        security: { oauth2: { resourceserver: { jwt: { "issuer-uri": issuer.url } } } },
        thaw: { task: { execution: { pool: { "max-size": 1, "queue-capacity": 4 } } } },
      },
      security: security(),
      tasks: tasks(),
    });
    try {
      const reports = app.getBean(Reports);
      const caller = (name: string, authorities: string[]): Authentication => ({
        name,
        authorities,
        claims: {},
      });
      // Alice's run holds the one slot; Bob's waits in the queue, and starts once hers ends.
      const held = runAs(caller("alice", []), () => reports.hold());
      const bobs = runAs(caller("bob", ["SCOPE_reports"]), () => reports.who());
      await assert.rejects(
        runAs(caller("eve", ["SCOPE_other"]), () => reports.who()),
        AccessDeniedError,
      );
      reports.gate.resolve();
      await held;
      assert.equal(await bobs, "bob");
      assert.equal(reports.runs, 2);
    } finally {
      await app.close();
    }
  });

  it("stops bootstrap when the decorators are used without security()", async () => {
    await assert.rejects(
      bootstrap({ components: [Accounts] }),
      /@Secured, @PreAuthorize and @PostAuthorize need the security feature: import \{ security \}/,
    );
  });

  it("types a check against the method's arguments", () => {
    const never = false as boolean;
    if (never) {
      class Typed {
        // @ts-expect-error: the check takes a number, the method a string
        @PreAuthorize((_caller, id: number) => id > 0)
        find(id: string): string {
          return id;
        }
      }
      void Typed;
    }
  });
});
