// What the OpenAPI document calls valid, the server must accept: generated classes and bodies, path
// variables, parameters and headers of type Number, and the sample app's body, each sent to a real
// app and checked against the schema that app's own document gives.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type Application,
  bootstrap,
  type Class,
  GetMapping,
  PathVariable,
  PostMapping,
  RequestBody,
  RequestHeader,
  RequestParam,
  RestController,
  type StandardSchemaV1,
} from "../../mod.ts";
import { type OpenApiDocument, openApiDocument } from "../../openapi.ts";
import { UserInput } from "../../examples/users/src/user.ts";
import { propertyOptions } from "../property.ts";
import { assertValidOpenApi, schemaValidator } from "./openapi_validator.ts";

/** How a generated class declares one name. */
type Kind =
  // On the instance, as a class field defines it (or a constructor with `defineProperty`).
  | "field"
  | "functionField"
  | "readOnlyField"
  | "ownGetter"
  | "ownAccessor"
  // On the class's prototype.
  | "method"
  | "getter"
  | "accessor"
  | "setter";

interface Member {
  readonly name: string;
  readonly kind: Kind;
  /** A field's initial value: it types the field in the document. */
  readonly value: unknown;
}

const OWN_KINDS: ReadonlySet<Kind> = new Set([
  "field",
  "functionField",
  "readOnlyField",
  "ownGetter",
  "ownAccessor",
]);

// Few names, so that levels shadow each other; among them names every object has.
const NAMES = ["a", "b", "c", "getEmail", "constructor", "toString", "valueOf"] as const;

const member: fc.Arbitrary<Member> = fc.record({
  name: fc.constantFrom(...NAMES),
  kind: fc.constantFrom<Kind>(
    "field",
    "functionField",
    "readOnlyField",
    "ownGetter",
    "ownAccessor",
    "method",
    "getter",
    "accessor",
    "setter",
  ),
  value: fc.constantFrom<unknown>("", 0, false, null, [], {}),
});

/** Base first: each level extends the one before it. */
const classSpec: fc.Arbitrary<Member[][]> = fc.array(fc.array(member, { maxLength: 4 }), {
  minLength: 1,
  maxLength: 3,
});

// Setters accept anything: what they are given is kept here, not on the instance.
const setterStore = new WeakMap<object, unknown>();

function descriptorOf(m: Member): PropertyDescriptor {
  const get = () => m.value;
  const set = function (this: object, value: unknown): void {
    setterStore.set(this, value);
  };
  switch (m.kind) {
    case "field":
      return {
        value: structuredClone(m.value),
        writable: true,
        enumerable: true,
        configurable: true,
      };
    case "functionField":
      return { value: () => m.value, writable: true, enumerable: true, configurable: true };
    case "readOnlyField":
      return { value: m.value, writable: false, enumerable: true, configurable: true };
    case "ownGetter":
      return { get, enumerable: true, configurable: true };
    case "ownAccessor":
      return { get, set, enumerable: true, configurable: true };
    case "method":
      return { value: function () {}, writable: true, enumerable: false, configurable: true };
    case "getter":
      return { get, enumerable: false, configurable: true };
    case "accessor":
      return { get, set, enumerable: false, configurable: true };
    case "setter":
      return { set, enumerable: false, configurable: true };
  }
}

/** A class chain as `levels` declares it: fields by its constructors, the rest on prototypes. */
function buildClass(levels: readonly Member[][]): Class {
  let parent: new () => object = class {};
  for (const level of levels) {
    const Parent = parent;
    const cls = class extends Parent {
      constructor() {
        super();
        for (const m of level) {
          if (OWN_KINDS.has(m.kind)) Object.defineProperty(this, m.name, descriptorOf(m));
        }
      }
    };
    for (const m of level) {
      if (!OWN_KINDS.has(m.kind)) Object.defineProperty(cls.prototype, m.name, descriptorOf(m));
    }
    parent = cls;
  }
  Object.defineProperty(parent, "name", { value: "Generated" });
  return parent as Class;
}

/** An app with one route, `POST /body`, binding its body with `target`; and its document. */
async function bodyApp(
  target: Class | StandardSchemaV1,
): Promise<{ app: Application; document: OpenApiDocument; schema: unknown }> {
  @RestController()
  class BodyController {
    @PostMapping("/body", RequestBody(target))
    take(_body: unknown) {
      return { ok: true };
    }
  }
  const app = await bootstrap({ controllers: [BodyController] });
  const document = await openApiDocument(app);
  const operation = document.paths["/body"].post as {
    requestBody: { content: Record<string, { schema: unknown }> };
  };
  return { app, document, schema: operation.requestBody.content["application/json"].schema };
}

function post(app: Application, text: string): Promise<Response> {
  return Promise.resolve(app.fetch(
    new Request("http://localhost/body", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: text,
    }),
  ));
}

/** A JSON object written out key by key, so that a `__proto__` key is sent as it is. */
function objectText(entries: readonly (readonly [string, unknown])[]): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`;
}

// Values every schema the class binding writes accepts at least one of.
const PROBES: readonly unknown[] = ["", 0, false, null, [], {}];

describe("the document and the server agree on class bodies (property)", () => {
  it("accepts every body the document calls valid, and refuses exactly the names it forbids", async () => {
    const extraKey = fc.string({ maxLength: 6 }).filter((k) => k !== "__proto__");
    const key = fc.oneof(
      fc.constantFrom(...NAMES, "__proto__", "hasOwnProperty"),
      extraKey,
    );
    const value = fc.oneof(
      fc.constantFrom<unknown>("", "x", 0, 1.5, true, false, null, [], [1], {}, { k: 1 }),
      fc.jsonValue({ maxDepth: 1 }),
    );
    const body = fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: 4 });
    const bodies = fc.array(body, { minLength: 1, maxLength: 4 });
    const seen = { valid: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(classSpec, bodies, async (levels, entriesList) => {
        const cls = buildClass(levels);
        const { app, document, schema } = await bodyApp(cls);
        const validate = schemaValidator(document);
        const check = (schema: unknown, value: unknown) => validate(schema, value).valid;
        // A name the document forbids: no value makes a body of it alone valid.
        const forbidden = (name: string) =>
          PROBES.every((probe) => !check(schema, JSON.parse(objectText([[name, probe]]))));
        for (const entries of entriesList) {
          const text = objectText(entries);
          const documentValid = check(schema, JSON.parse(text));
          const res = await post(app, text);
          const answer = await res.text();
          if (documentValid) {
            seen.valid++;
            assert.equal(res.status, 200, `document-valid ${text} answered ${answer}`);
          }
          const refusedByDocument = entries.map(([k]) => k).filter(forbidden);
          if (res.status === 400) {
            seen.refused++;
            const named = /Request body property "(.*)" is not a settable property/.exec(
              JSON.parse(answer).error,
            );
            assert.ok(named, `400 for another reason: ${answer}`);
            assert.ok(
              refusedByDocument.includes(named[1]),
              `the server refused "${named[1]}", the document allows it: ${text}`,
            );
          } else {
            assert.equal(res.status, 200, `${text} answered ${answer}`);
            assert.deepEqual(refusedByDocument, [], `the server accepted ${text}`);
          }
        }
      }),
      propertyOptions(100),
    );
    // Both sides of the agreement were reached, or the property proved nothing.
    assert.ok(seen.valid > 0 && seen.refused > 0, JSON.stringify(seen));
  });

  it("is valid OpenAPI 3.1 with the forbidden names (@seriousme/openapi-schema-validator)", async () => {
    await fc.assert(
      fc.asyncProperty(classSpec, async (levels) => {
        await assertValidOpenApi((await bodyApp(buildClass(levels))).document);
      }),
      propertyOptions(30),
    );
  });
});

@RestController()
class NumberController {
  @GetMapping("/path/{n}", PathVariable("n", Number))
  path(n: number) {
    return { n };
  }
  @GetMapping("/query", RequestParam("n", { type: Number }))
  query(n: number) {
    return { n };
  }
  @GetMapping("/header", RequestHeader("x-n", { type: Number }))
  header(n: number) {
    return { n };
  }
}

describe("the document and the server agree on Number path variables, parameters, headers (property)", () => {
  const MAX = BigInt(Number.MAX_SAFE_INTEGER);
  // What a client holding the value sends: its decimal text.
  const sent = fc.oneof(
    fc.bigInt({ min: MAX - 20n, max: MAX + 20n }).map(String),
    fc.bigInt({ min: -MAX - 20n, max: -MAX + 20n }).map(String),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    fc.integer().map(String),
    fc.double().map(String),
  );

  it("accepts a value exactly when the document does", async () => {
    const app = await bootstrap({ controllers: [NumberController] });
    const document = await openApiDocument(app);
    await assertValidOpenApi(document);
    const check = schemaValidator(document);
    const schemaOf = (path: string) =>
      (document.paths[path].get as { parameters: { schema: unknown }[] }).parameters[0].schema;
    const places = [
      { path: "/path/{n}", url: (t: string) => `/path/${encodeURIComponent(t)}`, headers: {} },
      { path: "/query", url: (t: string) => `/query?n=${encodeURIComponent(t)}`, headers: {} },
      { path: "/header", url: () => "/header", headers: (t: string) => ({ "x-n": t }) },
    ] as const;
    await fc.assert(
      fc.asyncProperty(sent, fc.constantFrom(...places), async (text, place) => {
        // The value the document's schema sees: the text read as a JSON number, or not one.
        let value: unknown = text;
        try {
          value = JSON.parse(text);
        } catch {
          // "NaN", "Infinity": no number a client could hold as an integer.
        }
        const documentValid = check(schemaOf(place.path), value).valid;
        const headers = typeof place.headers === "function" ? place.headers(text) : {};
        const res = await app.fetch(
          new Request(`http://localhost${place.url(text)}`, { headers }),
        );
        const answer = await res.text();
        assert.equal(res.status, documentValid ? 200 : 400, `${place.path} ${text}: ${answer}`);
        if (documentValid) assert.deepEqual(JSON.parse(answer), { n: value });
      }),
      propertyOptions(150),
    );
  });
});

// One route per regex, alone under its prefix: a value the regex refuses finds no route.
const REGEXES = ["\\d+", "[a-f0-9]{4}", "[a-z]+(?:-[a-z]+)*", "(json|xml)", "v\\d{1,3}"];

@RestController()
class ConstrainedController {
  @GetMapping("/c0/{v:\\d+}", PathVariable("v"))
  c0(v: string): string {
    return v;
  }
  @GetMapping("/c1/{v:[a-f0-9]{4}}", PathVariable("v"))
  c1(v: string): string {
    return v;
  }
  @GetMapping("/c2/{v:[a-z]+(?:-[a-z]+)*}", PathVariable("v"))
  c2(v: string): string {
    return v;
  }
  @GetMapping("/c3/{v:(json|xml)}", PathVariable("v"))
  c3(v: string): string {
    return v;
  }
  @GetMapping("/c4/{v:v\\d{1,3}}", PathVariable("v"))
  c4(v: string): string {
    return v;
  }
}

describe("the document and the server agree on {name:regex} path variables (property)", () => {
  it("routes a value exactly when the parameter's pattern takes it", async () => {
    const app = await bootstrap({ controllers: [ConstrainedController] });
    const document = await openApiDocument(app);
    await assertValidOpenApi(document);
    const check = schemaValidator(document);
    const schemaOf = (i: number) =>
      (document.paths[`/c${i}/{v}`].get as { parameters: { schema: unknown }[] }).parameters[0]
        .schema;
    const text = fc.array(
      fc.constantFrom(
        "0",
        "7",
        "a",
        "f",
        "z",
        "-",
        "v",
        "j",
        "s",
        "o",
        "n",
        "x",
        "m",
        "l",
        " ",
        "é",
        ";",
      ),
      { maxLength: 8 },
    ).map((c) => c.join(""));
    // Near misses and hits of each regex, which random text seldom spells.
    const near = fc.constantFrom(
      "json",
      "xml",
      "jsonx",
      "a0f7",
      "a0f",
      "v12",
      "v1234",
      "go-on",
      "-a",
    );
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: REGEXES.length - 1 }),
        fc.oneof(text, near),
        async (i, value) => {
          const documentValid = check(schemaOf(i), value).valid;
          const res = await app.fetch(
            new Request(`http://localhost/c${i}/${encodeURIComponent(value)}`),
          );
          const answer = await res.text();
          assert.equal(res.status, documentValid ? 200 : 404, `${REGEXES[i]} ${value}: ${answer}`);
          if (documentValid) assert.equal(answer, value);
        },
      ),
      propertyOptions(300),
    );
  });
});

describe("the sample app's body: the document states what the server checks (property)", () => {
  it("accepts a name exactly when the document does: blank, padded, astral, around 100", async () => {
    const { app, schema, document } = await bodyApp(UserInput);
    const check = schemaValidator(document);
    const char = fc.constantFrom(
      " ",
      "\t",
      "\n",
      "\u00a0",
      "\u2028",
      "\u3000",
      "\ufeff",
      "a",
      "é",
      "😀",
    );
    const name = fc.oneof(
      fc.array(char, { maxLength: 8 }).map((cs) => cs.join("")),
      fc.tuple(fc.array(char, { maxLength: 6 }), fc.integer({ min: 90, max: 105 }), char)
        .map(([pad, n, c]) => pad.join("") + c.repeat(n) + pad.join("")),
    );
    await fc.assert(
      fc.asyncProperty(name, async (n) => {
        const body = { name: n, email: "ada@example.com" };
        const documentValid = check(schema, body).valid;
        const res = await post(app, JSON.stringify(body));
        assert.equal(
          res.status,
          documentValid ? 200 : 400,
          `${JSON.stringify(n)} (${[...n].length} code points): ${await res.text()}`,
        );
      }),
      propertyOptions(150),
    );
  });
});
