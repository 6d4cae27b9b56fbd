import type { ConfigValues } from "../config/config_values.ts";
import { isTimeout, timeoutRule, within } from "./hook_timeout.ts";
import { messageOf } from "./message_of.ts";
import type { Class } from "./class.ts";
import {
  beanExtension,
  type BeanSupport,
  type ContextLogger,
  defaultBeanName,
  missingAdviceOf,
  providerOf,
  recordChain,
  recordOf,
  type Stereotype,
} from "./class_record.ts";
import {
  CircularDependencyError,
  DefinitionError,
  DuplicateBeanError,
  NoSuchBeanError,
} from "./errors.ts";
import { awaitedForm } from "./awaited_form.ts";
import { constructWith, FOR_CLASS } from "./field_injection.ts";
import { lifecycleHooks } from "./lifecycle.ts";
import {
  CONFIGURED_FIELDS,
  type ConfiguredFields,
  constructionHook,
  PROPERTIES_BINDING,
  type PropertiesBinding,
} from "./construction_hooks.ts";
import { shownValue } from "../shown_value.ts";

interface BeanDefinition {
  readonly name: string;
  /** Where it was declared, for messages: `class UserService`, `@Bean AppConfig.clock()`. */
  readonly source: string;
  /** The class, for class beans; a `@Bean` method's type is known only once it has run. */
  readonly type: Class | undefined;
  readonly stereotype: Stereotype | "bean";
  readonly create: () => Promise<unknown>;
  state: "idle" | "creating" | "ready";
  instance: unknown;
  /** The instance an override gives: used as it is, neither created nor started. */
  given?: { readonly instance: unknown };
  /** Chosen when several beans fit a class (a feature's: the primary datasource's client). */
  readonly primary?: boolean;
}

/** A bean a feature defines in code (a datasource's client), as `registerBean` takes it. */
export interface BeanRegistration {
  readonly name: string;
  /** The class it is found by: its instance is of this class or a subclass. */
  readonly type: Class;
  /** Where it was declared, for messages: the configuration line. */
  readonly source: string;
  /** Makes the instance; its `@PostConstruct` and `@PreDestroy` hooks run as a class bean's. */
  readonly create: () => Promise<unknown>;
  /** Chosen when several beans of its class fit `@Autowired(type)`. */
  readonly primary?: boolean;
}

/** A bean whose `@PostConstruct` hooks have all run, in the order they ran. */
interface StartedBean {
  readonly definition: BeanDefinition;
  readonly instance: unknown;
}

/** What the container is given besides its classes. */
export interface ContextOptions {
  /** The loaded configuration (after `${VAR}` substitution), where `@Value` fields are read. */
  readonly config?: ConfigValues;
  /**
   * Where a key of the configuration is, for messages: `application-prod.yml:3: mail.port`, or
   * `environment variable MAIL_PORT: mail.port`. The key alone by default.
   */
  readonly locate?: (key: string) => string;
  /**
   * How long each `@PreDestroy` hook may run, in milliseconds: when `refresh` fails and stops the
   * beans it started, and by default for `close`. 30 seconds unless given.
   */
  readonly shutdownTimeoutMs?: number;
  /** Where beans of Thaw's own report what goes wrong outside a caller's reach; `console`. */
  readonly logger?: ContextLogger;
}

/** How long a `@PreDestroy` hook may run when nothing else is said: Spring Boot's default. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

interface StackEntry {
  readonly definition: BeanDefinition;
  via?: string;
}

/** A created bean, as the web layer needs it. */
export interface BeanEntry {
  readonly name: string;
  readonly type: Class | undefined;
  readonly stereotype: Stereotype | "bean";
  readonly instance: unknown;
}

/**
 * The IoC container: bean definitions by name, singletons created once at `refresh`, dependencies
 * resolved before each class is constructed.
 */
export class ApplicationContext {
  readonly #definitions: BeanDefinition[] = [];
  readonly #byName = new Map<string, BeanDefinition>();
  readonly #classes = new Set<Class>();
  readonly #stack: StackEntry[] = [];
  readonly #config: ConfigValues;
  readonly #locate: (key: string) => string;
  readonly #shutdownTimeoutMs: number;
  readonly #logger: ContextLogger;
  readonly #started: StartedBean[] = [];
  // An object started once stays started, though two beans hold it (a `@Bean` method returning
  // another bean): its hooks run once each way.
  readonly #startedInstances = new Set<unknown>();
  #closing: Promise<void> | undefined;

  /**
   * An empty container.
   *
   * @param options the configuration `@Value` fields read, and the `@PreDestroy` time limit
   */
  constructor(options: ContextOptions = {}) {
    this.#config = options.config ?? {};
    this.#locate = options.locate ?? ((key) => key);
    const timeout = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    if (!isTimeout(timeout)) {
      throw new RangeError(`ApplicationContext: shutdownTimeoutMs ${timeoutRule(timeout)}`);
    }
    this.#shutdownTimeoutMs = timeout;
    this.#logger = options.logger ?? console;
  }

  /** Registers a decorated class (and its `@Bean` methods); a class seen before is ignored. */
  register(cls: Class): void {
    if (typeof cls !== "function") {
      throw new DefinitionError(`Cannot register ${String(cls)} as a bean: it is not a class`);
    }
    if (this.#classes.has(cls)) return;
    const stereotype = recordOf(cls)?.stereotype;
    if (stereotype === undefined) {
      throw new DefinitionError(
        `Class ${cls.name || "(anonymous)"} is not a bean: decorate it with @RestController(), ` +
          `@Component(), @Service() or @Configuration()`,
      );
    }
    const name = stereotype.name ?? defaultBeanName(cls);
    if (name === "") {
      throw new DefinitionError("An anonymous class needs an explicit bean name");
    }
    this.#classes.add(cls);
    const definition = this.#define({
      name,
      source: `class ${cls.name}`,
      type: cls,
      stereotype: stereotype.kind,
      create: () => this.#instantiate(cls),
    });
    // A subclass may override a parent's @Bean method; the override wins.
    const methods = new Map(
      recordChain(cls).flatMap((r) => r.beanMethods).map((m) => [m.methodName, m]),
    );
    for (const method of methods.values()) {
      const source = `@Bean ${cls.name}.${method.methodName}()`;
      this.#define({
        name: method.beanName,
        source,
        type: undefined,
        stereotype: "bean",
        create: async () => {
          const owner = await this.#get(definition, "factory");
          let value: unknown;
          try {
            // Awaited: the method's interceptors may answer its value with a promise.
            value = await (awaitedForm(method.get(owner)) as () => unknown).call(owner);
          } catch (error) {
            throw new DefinitionError(`${source} threw: ${messageOf(error)}`, { cause: error });
          }
          if (value === undefined || value === null) {
            throw new DefinitionError(`${source} returned ${value}; a bean must be a value`);
          }
          return value;
        },
      });
    }
  }

  /**
   * Uses `instance` as the bean that `token` names, instead of creating it: its dependents get the
   * instance, its class is not constructed and its own lifecycle hooks do not run. A class finds
   * the one bean definition `@Autowired(token)` would (the class, or a subclass of it); a `@Bean`
   * method's bean, whose class shows only once it has run, is overridden by its name. Call it
   * after `register` and before `refresh`.
   */
  override(token: Class | string, instance: unknown): void {
    const definition = this.#overridden(token);
    const what = `bean '${definition.name}' (${definition.source})`;
    if (instance === undefined || instance === null) {
      throw new DefinitionError(`The override of ${what} is ${instance}; give the instance to use`);
    }
    if (definition.given !== undefined) {
      throw new DefinitionError(`The ${what} is overridden twice; give one instance`);
    }
    if (definition.state !== "idle") {
      throw new DefinitionError(`The ${what} is already created; override it before refresh`);
    }
    definition.given = { instance };
  }

  /** Defines a bean made in code; call it before `refresh`. Its name must be free. */
  registerBean(bean: BeanRegistration): void {
    this.#define({ ...bean, stereotype: "bean" });
  }

  /**
   * Creates every bean, in registration order, each after the beans it uses, and runs each one's
   * `@PostConstruct` hooks before handing it to any other. The first failure rejects, once the
   * `@PreDestroy` hooks of the beans already started have run, the latest first.
   */
  async refresh(): Promise<void> {
    try {
      for (const definition of this.#definitions) await this.#get(definition);
    } catch (error) {
      // An application that never starts must not keep what its first beans opened.
      const failures = await this.#stop(this.#shutdownTimeoutMs);
      if (failures.length > 0 && error instanceof Error) {
        error.message += `; then, stopping the beans already started: ${
          failures.map((f) => f.message).join("; ")
        }`;
      }
      throw error;
    }
  }

  /**
   * Runs the `@PreDestroy` hooks of every started bean once, the latest started first, each
   * bounded by `timeoutMs` (one still running then counts as failed and is not waited for). A
   * failure does not stop the others; the promise rejects at the end with an `AggregateError` of
   * every failure. Calling it again returns the same promise.
   */
  close(timeoutMs: number = this.#shutdownTimeoutMs): Promise<void> {
    if (!isTimeout(timeoutMs)) {
      return Promise.reject(
        new RangeError(`close(timeoutMs): timeoutMs ${timeoutRule(timeoutMs)}`),
      );
    }
    return this.#closing ??= this.#stop(timeoutMs).then((failures) => {
      if (failures.length > 0) {
        const count = `${failures.length} @PreDestroy hook${failures.length === 1 ? "" : "s"}`;
        throw new AggregateError(
          failures,
          `Closing the application context: ${count} failed: ${
            failures.map((f) => f.message).join("; ")
          }`,
        );
      }
    });
  }

  /**
   * The bean of a name, or of a class (the one bean that is an instance of it, or that an
   * override gave for it). Only beans created by `refresh` are seen.
   */
  getBean<T>(token: Class<T> | string): T {
    if (typeof token === "string") {
      const definition = this.#byName.get(token);
      if (definition?.state !== "ready") {
        throw new NoSuchBeanError(`No bean named '${token}'. ${this.#known()}`);
      }
      return definition.instance as T;
    }
    // An override's instance need not be of its class (a plain object standing in for a
    // repository): the class it stands for counts too.
    const found = this.#definitions.filter((d) =>
      d.state === "ready" && (d.instance instanceof token || isSubclass(d.type, token))
    );
    if (found.length === 0) {
      const advice = missingAdviceOf(token);
      throw new NoSuchBeanError(
        `No bean of class ${token.name}${
          advice === undefined ? "." : `: ${advice}`
        } ${this.#known()}`,
      );
    }
    const one = chosen(found, token);
    if (one) return one.instance as T;
    throw ambiguous(`getBean(${token.name})`, found, "ask for one by name");
  }

  /** The bean of a name, or `undefined`. */
  findBean(name: string): unknown {
    const definition = this.#byName.get(name);
    return definition?.state === "ready" ? definition.instance : undefined;
  }

  /** Where the bean of a name was declared, for messages. */
  sourceOf(name: string): string | undefined {
    return this.#byName.get(name)?.source;
  }

  /** Every created bean, in registration order. */
  beans(): BeanEntry[] {
    return this.#definitions.filter((d) => d.state === "ready");
  }

  #define(spec: Omit<BeanDefinition, "state" | "instance">): BeanDefinition {
    const existing = this.#byName.get(spec.name);
    if (existing !== undefined) {
      throw new DuplicateBeanError(spec.name, [existing.source, spec.source]);
    }
    const definition: BeanDefinition = { ...spec, state: "idle", instance: undefined };
    this.#definitions.push(definition);
    this.#byName.set(spec.name, definition);
    return definition;
  }

  async #get(definition: BeanDefinition, via?: string): Promise<unknown> {
    if (definition.state === "ready") return definition.instance;
    if (definition.given !== undefined) {
      definition.instance = definition.given.instance;
      definition.state = "ready";
      return definition.instance;
    }
    const top = this.#stack.at(-1);
    if (top !== undefined && via !== undefined) top.via = via;
    if (definition.state === "creating") {
      const start = this.#stack.findIndex((e) => e.definition === definition);
      throw new CircularDependencyError([
        ...this.#stack.slice(start).map((e) =>
          e.via === undefined ? e.definition.name : `${e.definition.name} (${e.via})`
        ),
        definition.name,
      ]);
    }
    definition.state = "creating";
    this.#stack.push({ definition });
    try {
      const instance = await definition.create();
      await this.#extend(instance);
      await this.#start(definition, instance);
      definition.instance = instance;
      definition.state = "ready";
      return instance;
    } catch (error) {
      definition.state = "idle";
      throw error;
    } finally {
      this.#stack.pop();
    }
  }

  // What the decorators of the bean's classes left to finish it (interceptors): nothing, for an
  // app that uses none of them.
  async #extend(instance: unknown): Promise<void> {
    const extend = beanExtension(instance);
    if (extend !== undefined && !this.#startedInstances.has(instance)) {
      await extend(instance as object, this.#support());
    }
  }

  #support(): BeanSupport {
    return {
      resolve: (token, request, where, byName) =>
        this.#resolve(token, request, where, request, byName),
      config: this.#config,
      locate: this.#locate,
      logger: this.#logger,
      beans: () => this.beans(),
    };
  }

  async #start(definition: BeanDefinition, instance: unknown): Promise<void> {
    if (this.#startedInstances.has(instance)) return;
    for (const hook of lifecycleHooks(instance, "postConstruct")) {
      try {
        await hook.run();
      } catch (error) {
        throw new DefinitionError(
          `@PostConstruct ${hookName(definition, instance, hook.methodName)} threw: ${
            messageOf(error)
          }`,
          { cause: error },
        );
      }
    }
    this.#started.push({ definition, instance });
    if (typeof instance === "object" || typeof instance === "function") {
      this.#startedInstances.add(instance);
    }
  }

  /** Runs the `@PreDestroy` hooks of the started beans, latest first; resolves to the failures. */
  async #stop(timeoutMs: number): Promise<Error[]> {
    const failures: Error[] = [];
    for (const { definition, instance } of this.#started.splice(0).reverse()) {
      for (const hook of lifecycleHooks(instance, "preDestroy")) {
        const name = `@PreDestroy ${hookName(definition, instance, hook.methodName)}`;
        const failure = await within(hook.run, timeoutMs, name);
        if (failure !== undefined) failures.push(failure);
      }
    }
    return failures;
  }

  #overridden(token: Class | string): BeanDefinition {
    if (typeof token === "string") {
      const definition = this.#byName.get(token);
      if (definition === undefined) {
        throw new DefinitionError(`No bean named '${token}' to override. ${this.#known()}`);
      }
      return definition;
    }
    if (typeof token !== "function") {
      throw new TypeError(
        `An override names its bean by a class or a bean name, got ${shownValue(token)}`,
      );
    }
    const typed = this.#definitions.filter((d) => isSubclass(d.type, token));
    const one = chosen(typed, token);
    if (one) return one;
    if (typed.length > 1) {
      throw ambiguous(`the override of ${token.name}`, typed, "override one by its name");
    }
    throw new DefinitionError(
      `No bean of class ${token.name} to override (a @Bean method's bean is overridden by its ` +
        `name). ${this.#known()}`,
    );
  }

  async #instantiate(cls: Class): Promise<unknown> {
    // `@Value` and `@ConfigurationProperties` leave their code in the metadata of the classes
    // they mark: an app that uses neither carries none of it.
    const values = constructionHook<ConfiguredFields>(cls, CONFIGURED_FIELDS)?.(
      cls,
      this.#config,
      this.#locate,
    ) ?? new Map<symbol, unknown>();
    for (const record of recordChain(cls)) {
      for (const injection of record.injections) {
        const where = `field '${injection.fieldName}' of class ${cls.name}`;
        const token = injection.token;
        const request = `@Autowired(${typeof token === "string" ? `"${token}"` : token.name})`;
        const bean = await this.#resolve(token, request, where, `field ${injection.fieldName}`);
        values.set(
          injection.key,
          (bean as { [FOR_CLASS]?: (cls: Class) => unknown })?.[FOR_CLASS]?.(cls) ?? bean,
        );
      }
    }
    let instance: unknown;
    try {
      instance = constructWith(cls as new () => unknown, values);
    } catch (error) {
      throw new DefinitionError(
        `Constructing class ${cls.name} threw: ${messageOf(error)}`,
        { cause: error },
      );
    }
    await constructionHook<PropertiesBinding>(cls, PROPERTIES_BINDING)?.(
      cls,
      instance as object,
      this.#config,
      this.#locate,
    );
    return instance;
  }

  /**
   * The bean `request` (`@Autowired(Clock)`, `@UseInterceptors(Timing)`) asks for on `where`;
   * `via` is how the bean being created reaches it, for the path a cycle shows.
   */
  async #resolve(
    token: Class | string,
    request: string,
    where: string,
    via: string,
    byName?: string,
  ): Promise<unknown> {
    if (typeof token === "string") {
      const definition = this.#byName.get(token);
      if (definition === undefined) {
        throw new NoSuchBeanError(
          `No bean named '${token}' for ${request} on ${where}. ${this.#known()}`,
        );
      }
      return this.#get(definition, via);
    }
    const byNameAdvice = byName === undefined ? undefined : `name one of them ${byName}`;
    const named = (found: BeanDefinition[]) =>
      byName === undefined ? undefined : only(found.filter((d) => d.name === byName));
    const typed = this.#definitions.filter((d) => isSubclass(d.type, token));
    const one = chosen(typed, token) ?? named(typed);
    if (one) return this.#get(one, via);
    if (typed.length > 1) throw ambiguous(`${request} on ${where}`, typed, byNameAdvice);
    // Only a @Bean method can still provide it, and its type shows once it has run.
    const made: BeanDefinition[] = [];
    for (const definition of this.#definitions) {
      if (definition.type !== undefined || definition.state === "creating") continue;
      if ((await this.#get(definition, via)) instanceof token) made.push(definition);
    }
    if (made.length === 1) return made[0].instance;
    const madeNamed = named(made);
    if (madeNamed !== undefined) return madeNamed.instance;
    if (made.length > 1) {
      throw ambiguous(`${request} on ${where}`, made, byNameAdvice);
    }
    // A @Bean method's bean made just now may have asked for the same token and had Thaw's own
    // defined (two @Bean methods' beans of one cached class): that one serves, not a second.
    const since = this.#definitions.filter((d) => isSubclass(d.type, token));
    if (since.length === 1) return this.#get(since[0], via);
    // One of Thaw's own (the cache manager, the event publisher), made when nothing registered
    // provides it.
    const provider = providerOf(token);
    if (provider !== undefined) {
      const definition = this.#define({
        name: defaultBeanName(token),
        source: `${token.name} (Thaw's default)`,
        type: token,
        stereotype: "component",
        create: async () => await provider(this.#support()),
      });
      return this.#get(definition, via);
    }
    // A @Bean method's bean replaced by a stand-in is known by its name only: its class is what
    // the instance shows, and a plain object shows none.
    const standIns = this.#definitions.filter((d) =>
      d.type === undefined && d.given !== undefined && !(d.given.instance instanceof token)
    );
    const hint = standIns.length === 0
      ? ""
      : ` The override of ${
        standIns.map((d) => `'${d.name}'`).join(", ")
      } is not an instance of ${token.name}: a @Bean method's bean found by class must be replaced ` +
        `by an instance of that class, or asked for by name (@Autowired("${standIns[0].name}")).`;
    // Decorated, yet not registered: most often a class its module does not export, which
    // component scanning cannot see (it finds modules' exports only).
    const stereotype = recordOf(token)?.stereotype;
    const advice = missingAdviceOf(token) ??
      (stereotype === undefined
        ? `decorate ${token.name} with @Service() or @Component() (or return one from a @Bean ` +
          "method) and register it."
        : `${token.name} is decorated with @${stereotype.decorator}() but was not ` +
          `registered: export it from its module (scanning finds exported classes only), or list ` +
          "it in bootstrap({ components }).");
    throw new NoSuchBeanError(
      `No bean of class ${token.name} for ${request} on ${where}: ${advice}${hint} ${this.#known()}`,
    );
  }

  #known(): string {
    const names = this.#definitions.map((d) => d.name);
    return names.length === 0
      ? "No beans are registered."
      : `Registered beans: ${names.join(", ")}.`;
  }
}

// `what` several beans fit, naming each, and what to do: none of them is primary.
function ambiguous(
  what: string,
  found: BeanDefinition[],
  advice = 'name one with @Autowired("name")',
): DefinitionError {
  return new DefinitionError(
    `Several beans fit ${what}: ${
      found.map((d) => `${d.name} (${d.source})`).join(", ")
    }; ${advice}`,
  );
}

// Of several beans that fit `token`: the one of that very class, else the one primary.
function chosen(found: BeanDefinition[], token: Class): BeanDefinition | undefined {
  return only(found) ?? only(found.filter((d) => d.type === token)) ??
    only(found.filter((d) => d.primary));
}

const only = <T>(list: readonly T[]): T | undefined => list.length === 1 ? list[0] : undefined;

/** Whether `type` is `token` or a subclass of it. */
function isSubclass(type: Class | undefined, token: Class): boolean {
  return type !== undefined && (type === token || type.prototype instanceof token);
}

/**
 * A hook as messages name it: `UserRepository.open()`, with the bean's name when it is not the
 * one the class would give (a named bean, or a `@Bean` method's).
 */
function hookName(definition: BeanDefinition, instance: unknown, methodName: string): string {
  const ctor: unknown = Object.getPrototypeOf(instance)?.constructor;
  const cls = typeof ctor === "function" && ctor.name !== "" ? ctor as Class : undefined;
  const method = `${cls?.name ?? "(anonymous)"}.${methodName}()`;
  return cls !== undefined && defaultBeanName(cls) === definition.name
    ? method
    : `${method} of bean '${definition.name}'`;
}
