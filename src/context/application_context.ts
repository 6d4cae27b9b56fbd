import { constructWith } from "./autowired.ts";
import {
  type Class,
  defaultBeanName,
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
}

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
            value = await (method.get(owner) as () => unknown).call(owner);
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

  /** Creates every bean, in registration order; the first failure rejects. */
  async refresh(): Promise<void> {
    for (const definition of this.#definitions) await this.#get(definition);
  }

  /**
   * The bean of a name, or of a class (the one bean that is an instance of it).
   * Only beans created by `refresh` are seen.
   */
  getBean<T>(token: Class<T> | string): T {
    if (typeof token === "string") {
      const definition = this.#byName.get(token);
      if (definition?.state !== "ready") {
        throw new NoSuchBeanError(`No bean named '${token}'. ${this.#known()}`);
      }
      return definition.instance as T;
    }
    const found = this.#definitions.filter((d) =>
      d.state === "ready" && d.instance instanceof token
    );
    if (found.length === 1) return found[0].instance as T;
    if (found.length === 0) {
      throw new NoSuchBeanError(`No bean of class ${token.name}. ${this.#known()}`);
    }
    const exact = found.filter((d) => d.type === token);
    if (exact.length === 1) return exact[0].instance as T;
    throw new DefinitionError(
      `Several beans are instances of ${token.name}: ${found.map((d) => d.name).join(", ")}; ` +
        `ask for one by name`,
    );
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
      definition.instance = await definition.create();
      definition.state = "ready";
      return definition.instance;
    } catch (error) {
      definition.state = "idle";
      throw error;
    } finally {
      this.#stack.pop();
    }
  }

  async #instantiate(cls: Class): Promise<unknown> {
    const values = new Map<symbol, unknown>();
    for (const record of recordChain(cls)) {
      for (const injection of record.injections) {
        const where = `field '${injection.fieldName}' of class ${cls.name}`;
        values.set(injection.key, await this.#resolve(injection.token, where, injection.fieldName));
      }
    }
    try {
      return constructWith(cls as new () => unknown, values);
    } catch (error) {
      throw new DefinitionError(
        `Constructing class ${cls.name} threw: ${messageOf(error)}`,
        { cause: error },
      );
    }
  }

  async #resolve(token: Class | string, where: string, field: string): Promise<unknown> {
    const via = `field ${field}`;
    if (typeof token === "string") {
      const definition = this.#byName.get(token);
      if (definition === undefined) {
        throw new NoSuchBeanError(
          `No bean named '${token}' for @Autowired("${token}") on ${where}. ${this.#known()}`,
        );
      }
      return this.#get(definition, via);
    }
    const typed = this.#definitions.filter((d) =>
      d.type !== undefined && (d.type === token || d.type.prototype instanceof token)
    );
    if (typed.length === 1) return this.#get(typed[0], via);
    if (typed.length > 1) {
      const exact = typed.filter((d) => d.type === token);
      if (exact.length === 1) return this.#get(exact[0], via);
      throw ambiguous(token, where, typed);
    }
    // Only a @Bean method can still provide it, and its type shows once it has run.
    const made: BeanDefinition[] = [];
    for (const definition of this.#definitions) {
      if (definition.type !== undefined || definition.state === "creating") continue;
      if ((await this.#get(definition, via)) instanceof token) made.push(definition);
    }
    if (made.length === 1) return made[0].instance;
    if (made.length > 1) {
      throw ambiguous(token, where, made);
    }
    throw new NoSuchBeanError(
      `No bean of class ${token.name} for @Autowired(${token.name}) on ${where}: decorate ` +
        `${token.name} with @Service() or @Component() (or return one from a @Bean method) and ` +
        `register it. ${this.#known()}`,
    );
  }

  #known(): string {
    const names = this.#definitions.map((d) => d.name);
    return names.length === 0
      ? "No beans are registered."
      : `Registered beans: ${names.join(", ")}.`;
  }
}

function ambiguous(token: Class, where: string, found: BeanDefinition[]): DefinitionError {
  return new DefinitionError(
    `Several beans fit @Autowired(${token.name}) on ${where}: ` +
      `${found.map((d) => `${d.name} (${d.source})`).join(", ")}; name one with @Autowired("name")`,
  );
}

/** An error's message, or the thrown value as text when it is not an Error. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
