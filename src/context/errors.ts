/**
 * Two beans share a name. Only one bean may have a name: notably, only one `errorController`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, Component, DuplicateBeanError, Service } from "@thaw/thaw";
 *
 * @Service("mailer")
 * class SmtpMailer {}
 * @Component("mailer")
 * class FakeMailer {}
 *
 * await assert.rejects(bootstrap({ components: [SmtpMailer, FakeMailer] }), (e) => {
 *   assert.ok(e instanceof DuplicateBeanError);
 *   assert.equal(e.beanName, "mailer");
 *   assert.deepEqual(e.sources, ["class SmtpMailer", "class FakeMailer"]);
 *   return true;
 * });
 * ```
 */
export class DuplicateBeanError extends Error {
  /** The name both beans claim. */
  readonly beanName: string;
  /** Where each bean comes from, e.g. `class AppErrors` or `@Bean ErrorConfig.errors()`. */
  readonly sources: readonly string[];

  /**
   * Creates the error.
   *
   * @param beanName the contested name
   * @param sources where each bean was declared
   */
  constructor(beanName: string, sources: readonly string[]) {
    super(
      `Bean name '${beanName}' is declared twice: ${sources.join(" and ")}. ` +
        `Only one bean may have that name; rename or remove one.`,
    );
    this.name = "DuplicateBeanError";
    this.beanName = beanName;
    this.sources = sources;
  }
}

/**
 * A bean that was asked for (by `@Autowired` or `getBean`) does not exist.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Autowired, bootstrap, NoSuchBeanError, Service } from "@thaw/thaw";
 *
 * @Service()
 * class Report {
 *   @Autowired("clock")
 *   clock!: () => Date;
 * }
 *
 * await assert.rejects(
 *   bootstrap({ components: [Report] }),
 *   (e) => e instanceof NoSuchBeanError && /No bean named 'clock'/.test(e.message),
 * );
 * ```
 */
export class NoSuchBeanError extends Error {
  /**
   * Creates the error.
   *
   * @param message what was missing and who needed it
   */
  constructor(message: string) {
    super(message);
    this.name = "NoSuchBeanError";
  }
}

/**
 * Beans depend on each other in a circle; the message walks the circle.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Autowired, bootstrap, CircularDependencyError, Service } from "@thaw/thaw";
 *
 * @Service()
 * class Ping {
 *   @Autowired("pong")
 *   pong!: unknown;
 * }
 * @Service()
 * class Pong {
 *   @Autowired(Ping)
 *   ping!: Ping;
 * }
 *
 * await assert.rejects(bootstrap({ components: [Ping, Pong] }), (e) => {
 *   assert.ok(e instanceof CircularDependencyError);
 *   assert.equal(e.message, "Dependency cycle: ping (field pong) -> pong (field ping) -> ping");
 *   return true;
 * });
 * ```
 */
export class CircularDependencyError extends Error {
  /** The beans of the circle, from the first back to itself. */
  readonly cycle: readonly string[];

  /**
   * Creates the error.
   *
   * @param cycle the beans of the circle, ending where it began
   */
  constructor(cycle: readonly string[]) {
    super(`Dependency cycle: ${cycle.join(" -> ")}`);
    this.name = "CircularDependencyError";
    this.cycle = cycle;
  }
}

/**
 * The application is wired or declared wrongly: a bad route, a bad decorator use, a bean that
 * cannot be made. The message names the class, method or route.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap, DefinitionError, GetMapping, RestController } from "@thaw/thaw";
 *
 * @RestController()
 * class UserController {
 *   @GetMapping("/users/{id")
 *   get(): string {
 *     return "";
 *   }
 * }
 *
 * await assert.rejects(bootstrap({ controllers: [UserController] }), (e) => {
 *   assert.ok(e instanceof DefinitionError);
 *   assert.match(e.message, /UserController\.get .*: a "\{" is not closed/);
 *   return true;
 * });
 * ```
 */
export class DefinitionError extends Error {
  /**
   * Creates the error.
   *
   * @param message what is wrong and where
   * @param options the standard `cause`
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DefinitionError";
  }
}
