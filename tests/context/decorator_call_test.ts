import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { stop, transform } from "esbuild";
import * as thaw from "../../mod.ts";
import { checkDecoratorCall } from "../../src/context/decorator_call.ts";

const LEGACY = /was called as a legacy decorator: .*Remove "experimentalDecorators": true/;

describe("a decorator called the legacy way (experimentalDecorators)", () => {
  after(() => stop());

  class Users {
    list() {}
  }
  // What TypeScript's and esbuild's legacy emit passes: the class; the prototype and the name;
  // and, for a method, its descriptor.
  const onClass = (d: unknown) => (d as (c: unknown) => void)(Users);
  const onMethod = (d: unknown) =>
    (d as (...a: unknown[]) => void)(
      Users.prototype,
      "list",
      Object.getOwnPropertyDescriptor(Users.prototype, "list"),
    );
  const onField = (d: unknown) => (d as (...a: unknown[]) => void)(Users.prototype, "repo");
  const cases: [string, unknown, (d: unknown) => void, string][] = [
    ["@RestController", thaw.RestController(), onClass, "class Users"],
    ["@Component", thaw.Component(), onClass, "class Users"],
    ["@Service", thaw.Service(), onClass, "class Users"],
    ["@Configuration", thaw.Configuration(), onClass, "class Users"],
    ["@ControllerAdvice", thaw.ControllerAdvice(), onClass, "class Users"],
    ["@RequestMapping", thaw.RequestMapping("/users"), onClass, "class Users"],
    ["@ApiTags", thaw.ApiTags("users"), onClass, "class Users"],
    [
      "@UseMiddleware",
      thaw.UseMiddleware(async (_c, next) => await next()),
      onClass,
      "class Users",
    ],
    ["@GetMapping", thaw.GetMapping("/"), onMethod, "Users.list"],
    ["@PostMapping", thaw.PostMapping("/"), onMethod, "Users.list"],
    ["@PutMapping", thaw.PutMapping("/"), onMethod, "Users.list"],
    ["@PatchMapping", thaw.PatchMapping("/"), onMethod, "Users.list"],
    ["@DeleteMapping", thaw.DeleteMapping("/"), onMethod, "Users.list"],
    ["@ExceptionHandler", thaw.ExceptionHandler(Error), onMethod, "Users.list"],
    ["@Bean", thaw.Bean(), onMethod, "Users.list"],
    ["@PostConstruct", thaw.PostConstruct(), onMethod, "Users.list"],
    ["@PreDestroy", thaw.PreDestroy(), onMethod, "Users.list"],
    ["@ApiOperation", thaw.ApiOperation({ summary: "x" }), onMethod, "Users.list"],
    ["@ApiResponse", thaw.ApiResponse(200, { description: "x" }), onMethod, "Users.list"],
    ["@Autowired", thaw.Autowired(Users), onField, "Users.repo"],
    ['@Value("${app.name}")', thaw.Value("${app.name}"), onField, "Users.repo"],
  ];
  for (const [name, decorator, call, where] of cases) {
    it(`${name} names ${where} and the tsconfig setting`, () => {
      assert.throws(
        () => call(decorator),
        (error: unknown) =>
          error instanceof TypeError &&
          error.message.startsWith(`${name} on ${where} was called as a legacy decorator`) &&
          LEGACY.test(error.message),
      );
    });
  }

  it("is caught at the first decorator of a class esbuild compiled with experimentalDecorators", async () => {
    const { code } = await transform(
      `@RestController()
       class Greetings {
         @GetMapping("/hello")
         hello() { return "hi"; }
       }`,
      {
        loader: "ts",
        format: "esm",
        tsconfigRaw: { compilerOptions: { experimentalDecorators: true } },
      },
    );
    // The legacy emit: a helper that calls each decorator as (prototype, name, descriptor).
    assert.match(code, /__decorateClass/);
    const run = new Function("RestController", "GetMapping", code);
    assert.throws(
      () => run(thaw.RestController, thaw.GetMapping),
      (error: unknown) =>
        error instanceof TypeError &&
        error.message.startsWith(
          "@GetMapping on Greetings.hello was called as a legacy decorator",
        ),
    );
  });

  it("lets a standard call through", () => {
    const context = { kind: "class", name: "Users", metadata: {} } as ClassDecoratorContext;
    assert.doesNotThrow(() => checkDecoratorCall("@RestController", Users, context));
    for (const odd of [null, 0, "", {}, { kind: 1 }]) {
      assert.throws(() => checkDecoratorCall("@X", Users, odd), LEGACY, String(odd));
    }
  });
});
