// The document of operations that read a form body: RequestPart as multipart/form-data (a File part
// a binary string), RequestParam on POST, PUT and PATCH as an optional urlencoded body as well as
// a query parameter; and the server accepts a body exactly when the document's schema does.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  bootstrap,
  DeleteMapping,
  GetMapping,
  PatchMapping,
  PostMapping,
  PutMapping,
  RequestParam,
  RequestPart,
  RestController,
} from "../../mod.ts";
import { type OpenApiDocument, openApiDocument } from "../../openapi.ts";
import { propertyOptions } from "../property.ts";
import { assertValidOpenApi, schemaValidator } from "./openapi_validator.ts";

@RestController()
class FormController {
  @PostMapping(
    "/avatars",
    RequestPart("image", { type: File }),
    RequestPart("size", { type: Number, required: false }),
    RequestPart("caption"),
    RequestPart("public", { type: Boolean }),
    RequestParam("note", { required: false }),
  )
  upload(
    _image: File,
    _size: number | undefined,
    _caption: unknown,
    _public: boolean,
    _note: string | undefined,
  ) {}
  @PostMapping(
    "/login",
    RequestParam("user"),
    RequestParam("remember", { type: Boolean, default: false }),
    RequestParam("__proto__", { required: false }),
  )
  login(_user: string, _remember: boolean, _proto: string | undefined) {}
  @PutMapping("/put", RequestParam("n", { type: Number }))
  put(_n: number) {}
  @PatchMapping("/patch", RequestParam("n", { type: Number }))
  patch(_n: number) {}
  @DeleteMapping("/delete", RequestParam("n", { type: Number }))
  remove(_n: number) {}
  @GetMapping("/get", RequestParam("n", { type: Number }))
  get(_n: number) {}
}

type Operation = {
  parameters?: { name: string; in: string; required: boolean }[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { $ref?: string }>;
};

const operation = (document: OpenApiDocument, path: string, method: string) =>
  document.paths[path][method] as Operation;

describe("the document of form bodies", () => {
  it("documents RequestPart as a multipart/form-data body, a File part as binary", async () => {
    const document = await openApiDocument(await bootstrap({ controllers: [FormController] }));
    await assertValidOpenApi(document);
    const upload = operation(document, "/avatars", "post");
    assert.deepEqual(upload.requestBody, {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object",
            properties: {
              image: { type: "string", format: "binary" },
              size: {
                type: "integer",
                minimum: -Number.MAX_SAFE_INTEGER,
                maximum: Number.MAX_SAFE_INTEGER,
              },
              caption: { type: "string" },
              public: { type: "boolean" },
              note: { type: "string" },
            },
            required: ["image", "caption", "public"],
          },
        },
      },
    });
    assert.deepEqual(upload.parameters?.map((p) => [p.name, p.in]), [["note", "query"]]);
    assert.deepEqual(upload.responses["413"], {
      $ref: "#/components/responses/MultipartTooLarge",
    });
    assert.deepEqual(upload.responses["415"], {
      $ref: "#/components/responses/UnsupportedMultipartType",
    });
    assert.equal(upload.responses["400"].$ref, "#/components/responses/BadRequest");
    assert.match(
      (document.components.responses.MultipartTooLarge as { description: string }).description,
      /server\.multipart\.max-request-size.*server\.multipart\.max-file-size.*server\.multipart\.max-parts/,
    );
  });

  it("documents RequestParam on POST, PUT and PATCH as a query parameter and an optional form body", async () => {
    const document = await openApiDocument(await bootstrap({ controllers: [FormController] }));
    const login = operation(document, "/login", "post");
    assert.deepEqual(login.parameters?.map((p) => [p.name, p.in, p.required]), [
      ["user", "query", true],
      ["remember", "query", false],
      ["__proto__", "query", false],
    ]);
    const schema = login.requestBody?.content["application/x-www-form-urlencoded"].schema;
    assert.equal(login.requestBody?.required, false);
    assert.equal(
      JSON.stringify(schema),
      '{"type":"object","properties":{"user":{"type":"string"},' +
        '"remember":{"type":"boolean","default":false},"__proto__":{"type":"string"}}}',
    );
    for (const [path, method] of [["/put", "put"], ["/patch", "patch"]]) {
      const op = operation(document, path, method);
      assert.ok(op.requestBody?.content["application/x-www-form-urlencoded"], path);
      assert.equal(op.responses["413"].$ref, "#/components/responses/ContentTooLarge");
      assert.equal(op.responses["415"].$ref, "#/components/responses/UnsupportedFormEncoding");
    }
    // A DELETE body SHOULD be avoided (OpenAPI 3.1): none is offered, the server's answers are.
    const remove = operation(document, "/delete", "delete");
    assert.equal(remove.requestBody, undefined);
    assert.equal(remove.responses["413"].$ref, "#/components/responses/ContentTooLarge");
    const get = operation(document, "/get", "get");
    assert.equal(get.requestBody, undefined);
    assert.equal(get.responses["413"], undefined);
    assert.equal(({} as Record<string, unknown>).type, undefined);
  });

  it("an app without form bodies lists only the answers it always did", async () => {
    @RestController()
    class Plain {
      @GetMapping("/q", RequestParam("q"))
      q(_q: string) {}
    }
    const document = await openApiDocument(await bootstrap({ controllers: [Plain] }));
    assert.deepEqual(Object.keys(document.components.responses), [
      "BadRequest",
      "NotFound",
      "MethodNotAllowed",
      "ContentTooLarge",
      "UnsupportedMediaType",
      "InternalServerError",
    ]);
  });
});

describe("the document and the server agree on form bodies (property)", () => {
  @RestController()
  class Numbers {
    @PostMapping("/form", RequestParam("n", { type: Number }))
    form(n: number) {
      return { n };
    }
    @PostMapping("/part", RequestPart("n", { type: Number }))
    part(n: number) {
      return { n };
    }
  }
  const MAX = BigInt(Number.MAX_SAFE_INTEGER);
  const sent = fc.oneof(
    fc.bigInt({ min: MAX - 20n, max: MAX + 20n }).map(String),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    fc.integer().map(String),
    fc.double().map(String),
    fc.constant(""),
  );

  it("accepts a field or a part exactly when the document's body schema does", async () => {
    const app = await bootstrap({ controllers: [Numbers] });
    const document = await openApiDocument(app);
    await assertValidOpenApi(document);
    const check = schemaValidator(document);
    const schemaOf = (path: string, type: string) =>
      operation(document, path, "post").requestBody!.content[type].schema;
    await fc.assert(
      fc.asyncProperty(sent, fc.boolean(), async (text, multipart) => {
        let value: unknown = text;
        try {
          value = JSON.parse(text);
        } catch {
          // Not a number a client could hold.
        }
        const path = multipart ? "/part" : "/form";
        const type = multipart ? "multipart/form-data" : "application/x-www-form-urlencoded";
        const documentValid = check(schemaOf(path, type), { n: value }).valid;
        let body: BodyInit = `n=${encodeURIComponent(text)}`;
        if (multipart) {
          body = new FormData();
          body.append("n", text);
        }
        const headers: Record<string, string> = multipart ? {} : { "content-type": type };
        const res = await app.fetch(
          new Request(`http://localhost${path}`, { method: "POST", body, headers }),
        );
        const answer = await res.text();
        assert.equal(res.status, documentValid ? 200 : 400, `${path} ${text}: ${answer}`);
        if (documentValid) assert.deepEqual(JSON.parse(answer), { n: value });
      }),
      propertyOptions(150),
    );
  });
});
