// @PostAuthorize: the method runs, then a check of its caller and its result decides whether the
// caller gets it. A refusal is a 403 at the edge of a request that says nothing of the result,
// and no log line does either, whatever bytes it holds; no caller at all: the method never runs.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  Autowired,
  bootstrap,
  GetMapping,
  PathVariable,
  RestController,
  Service,
} from "../../mod.ts";
import {
  AccessDeniedError,
  type Authentication,
  PostAuthorize,
  PreAuthorize,
  security,
} from "../../security.ts";
import { Async, tasks } from "../../tasks.ts";
import { runAs } from "../../src/security/security_context.ts";
import { exportSPKI, generateKeyPair, SignJWT } from "jose";
import { memoryLogger } from "../helpers.ts";

// Every byte value, and a marker no answer holds by chance.
const SECRET = `secret-${crypto.randomUUID()}-${
  String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i))
}`;

interface Doc {
  readonly owner: string;
  readonly body: string;
}

class Built implements PromiseLike<Doc> {
  readonly #doc: Doc;

  constructor(doc: Doc) {
    this.#doc = doc;
  }

  then<A = Doc, B = never>(
    onFulfilled?: ((value: Doc) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return Promise.resolve(this.#doc).then(onFulfilled, onRejected);
  }
}

@Service()
class Documents {
  // Raised in the body: a result check comes after it, a missing caller before it.
  calls = 0;

  @PostAuthorize((caller, doc: Doc) => doc.owner === caller.name)
  read(owner: string): Doc {
    this.calls++;
    return { owner, body: SECRET };
  }

  // Async on both sides: the check gets the resolved value, not the promise.
  @PostAuthorize(async (caller, doc: Doc, owner: string) => {
    await Promise.resolve();
    return doc.owner === caller.name && owner === doc.owner;
  })
  async later(owner: string): Promise<Doc> {
    this.calls++;
    await Promise.resolve();
    return { owner, body: SECRET };
  }

  // Run by the executor, out of the caller's stack: its result is checked all the same.
  @Async()
  @PostAuthorize((caller, doc: Doc) => doc.owner === caller.name)
  async handedOff(owner: string): Promise<Doc> {
    this.calls++;
    await Promise.resolve();
    return { owner, body: SECRET };
  }

  // Checked before and after: a refused caller never runs it.
  @PreAuthorize((caller) => caller.authorities.includes("SCOPE_docs"))
  @PostAuthorize((caller, doc: Doc) => doc.owner === caller.name)
  guarded(owner: string): Doc {
    this.calls++;
    return { owner, body: SECRET };
  }

  // Two checks: each must hold.
  @PostAuthorize((_caller, doc: Doc) => doc.body.length > 0)
  @PostAuthorize((caller, doc: Doc) => doc.owner === caller.name)
  twice(owner: string): Doc {
    this.calls++;
    return { owner, body: SECRET };
  }

  // Not a Promise, and not async: a thenable that runs when awaited, as a query builder does.
  // Its rows are not there to check when it returns.
  @PostAuthorize((caller, doc: Doc) => doc.owner === caller.name)
  built(owner: string): PromiseLike<Doc> {
    this.calls++;
    return new Built({ owner, body: SECRET });
  }

  @PostAuthorize(() => {
    throw new Error("the check itself failed");
  })
  broken(): string {
    return "never seen";
  }
}

@RestController()
class DocumentsController {
  @Autowired(Documents)
  documents!: Documents;

  @GetMapping("/docs/{owner}", PathVariable("owner"))
  read(owner: string): Doc {
    return this.documents.read(owner);
  }

  @GetMapping("/later/{owner}", PathVariable("owner"))
  later(owner: string): Promise<Doc> {
    return this.documents.later(owner);
  }

  @GetMapping("/async/{owner}", PathVariable("owner"))
  async handedOff(owner: string): Promise<Doc> {
    return await this.documents.handedOff(owner);
  }

  // On the controller's own method too.
  @GetMapping("/own/{owner}", PathVariable("owner"))
  @PostAuthorize((caller, doc: Doc) => doc.owner === caller.name)
  own(owner: string): Doc {
    return { owner, body: SECRET };
  }
}

async function start() {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const logger = memoryLogger();
  const app = await bootstrap({
    controllers: [DocumentsController],
    components: [Documents],
    config: {
      security: {
        oauth2: { resourceserver: { jwt: { "public-key": await exportSPKI(publicKey) } } },
      },
    },
    security: security(),
    tasks: tasks(),
    logger,
  });
  const as = async (sub: string) => ({
    authorization: `Bearer ${await new SignJWT({ sub }).setProtectedHeader({ alg: "ES256" })
      .setExpirationTime("5m").sign(privateKey)}`,
  });
  return { app, logger, as };
}

const caller = (name: string, authorities: string[] = []): Authentication => ({
  name,
  authorities,
  claims: {},
});

describe("@PostAuthorize", () => {
  it("gives the result to a caller the check holds for, and a bare 403 to another", async () => {
    const { app, logger, as } = await start();
    try {
      for (const path of ["/docs", "/later", "/async", "/own"]) {
        const mine = await app.fetch(
          new Request(`http://localhost${path}/ann`, { headers: await as("ann") }),
        );
        assert.equal(mine.status, 200, path);
        assert.deepEqual(await mine.json(), { owner: "ann", body: SECRET });

        const theirs = await app.fetch(
          new Request(`http://localhost${path}/bob`, { headers: await as("ann") }),
        );
        assert.equal(theirs.status, 403, path);
        const body = await theirs.text();
        assert.ok(!body.includes("secret-"), `${path}: ${body}`);
        for (const [name, value] of theirs.headers) {
          assert.ok(!value.includes("secret-"), `${path}: header ${name}`);
        }
      }
      // The server's log says which method refused and why, never what it returned.
      const logged = JSON.stringify(
        logger.lines,
        (_key, value) =>
          value instanceof Error ? { message: value.message, stack: value.stack } : value,
      );
      assert.match(logged, /Documents\.read\(\): access denied \(result\)/);
      assert.ok(!logged.includes("secret-"), logged);
      // The method ran for both callers: the check is of its result.
      assert.equal(app.getBean(Documents).calls, 6);
    } finally {
      await app.close();
    }
  });

  it("refuses inside with an AccessDeniedError that holds nothing of the result", async () => {
    const { app } = await start();
    try {
      const documents = app.getBean(Documents);
      assert.deepEqual(runAs(caller("ann"), () => documents.read("ann")), {
        owner: "ann",
        body: SECRET,
      });
      const refused = (() => {
        try {
          runAs(caller("ann"), () => documents.read("bob"));
        } catch (error) {
          return error;
        }
        assert.fail("a result the check refused was returned");
      })();
      assert.ok(refused instanceof AccessDeniedError);
      assert.equal(refused.status, 403);
      assert.equal(refused.where, "Documents.read()");
      const shown = JSON.stringify({ ...refused, message: refused.message, stack: refused.stack });
      assert.ok(!shown.includes("secret-"), shown);
      assert.equal(refused.cause, undefined);

      await assert.rejects(
        runAs(caller("ann"), () => documents.later("bob")),
        (error: unknown) => error instanceof AccessDeniedError && error.status === 403,
      );
      assert.equal((await runAs(caller("ann"), () => documents.later("ann"))).owner, "ann");
    } finally {
      await app.close();
    }
  });

  it("runs nothing without a caller, nor for a caller @PreAuthorize refuses", async () => {
    const { app } = await start();
    try {
      const documents = app.getBean(Documents);
      assert.throws(
        () => documents.read("ann"),
        (error: unknown) => error instanceof AccessDeniedError && error.status === 401,
      );
      assert.throws(
        () => runAs(caller("ann"), () => documents.guarded("ann")),
        (error: unknown) => error instanceof AccessDeniedError && error.status === 403,
      );
      assert.equal(documents.calls, 0);
      // Both hold: the result.
      assert.equal(
        runAs(caller("ann", ["SCOPE_docs"]), () => documents.guarded("ann")).owner,
        "ann",
      );
      // The pre-check held, the result's did not.
      assert.throws(
        () => runAs(caller("ann", ["SCOPE_docs"]), () => documents.guarded("bob")),
        (error: unknown) => error instanceof AccessDeniedError && error.status === 403,
      );
      assert.equal(documents.calls, 2);
    } finally {
      await app.close();
    }
  });

  it("asks every check of a method, and lets a check's own failure through", async () => {
    const { app } = await start();
    try {
      const documents = app.getBean(Documents);
      assert.equal(runAs(caller("ann"), () => documents.twice("ann")).owner, "ann");
      assert.throws(
        () => runAs(caller("ann"), () => documents.twice("bob")),
        (error: unknown) => error instanceof AccessDeniedError,
      );
      assert.throws(
        () => runAs(caller("ann"), () => documents.broken()),
        /the check itself failed/,
      );
      // A thenable that is no promise holds no result yet: refused, and not handed on.
      for (const owner of ["ann", "bob"]) {
        assert.throws(
          () => runAs(caller("ann"), () => documents.built(owner)),
          /Documents\.built\(\): @PostAuthorize cannot check a result that runs when awaited/,
        );
      }
    } finally {
      await app.close();
    }
  });

  it("refuses a check that is not a function, saying what to give", () => {
    assert.throws(
      () => PostAuthorize("owner == caller" as never),
      /@PostAuthorize\(check\): give a function \(caller, result, \.\.\.args\) => boolean/,
    );
  });

  it("types a check against the method's result and arguments", () => {
    const never = false as boolean;
    if (never) {
      class Typed {
        @PostAuthorize((_caller, result: number, by: string) => result > by.length)
        count(by: string): number {
          return by.length + 1;
        }

        @PostAuthorize((_caller, result: number) => result > 0)
        async later(by: string): Promise<number> {
          return await Promise.resolve(by.length);
        }

        // @ts-expect-error: the check takes a number, the method returns a string
        @PostAuthorize((_caller, result: number) => result > 0)
        name(): string {
          return "";
        }

        // @ts-expect-error: the check's argument is a number, the method's a string
        @PostAuthorize((_caller, _result: string, id: number) => id > 0)
        find(id: string): string {
          return id;
        }
      }
      void Typed;
    }
  });
});
