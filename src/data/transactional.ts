// `@Transactional`: a method (or every method of a class) run in a transaction of a datasource,
// through the container's interceptors, as `@Cacheable` is. The options are checked where they
// are written; the datasource each names, once every bean is made (see data_setup.ts).
import type { Class } from "../context/class.ts";
import {
  type BeanProvider,
  type BeanSupport,
  classesOf,
  entryOf,
  ownEntry,
} from "../context/class_record.ts";
import { checkDecoratorCall } from "../context/decorator_call.ts";
import { DefinitionError } from "../context/errors.ts";
import {
  declaredAsync,
  interceptMethod,
  type MethodInterceptor,
  type MethodInvocation,
} from "../context/interceptors.ts";
import { DataError } from "../sql/data_error.ts";
import { SqlClient, transactionNamed } from "./sql_client.ts";
import { checkIsolation } from "../sql/dialects.ts";
import { checkTransactionOptions, type TransactionOptions } from "./transaction_options.ts";
import { MethodPlans } from "../context/method_plans.ts";

/** What `@Transactional` takes: a transaction's options, and the datasource it is of. */
export interface TransactionalOptions extends TransactionOptions {
  /** The datasource's name; the primary datasource by default. */
  readonly datasource?: string | undefined;
}

/** What {@linkcode Transactional} returns: a decorator for an async method or a class. */
export type TransactionalDecorator = (
  value: unknown,
  context: ClassDecoratorContext | ClassMethodDecoratorContext,
) => void;

/** Each method's `@Transactional` options, by method name, in the metadata of its class. */
const TRANSACTIONAL = Symbol("thaw.transactional");

const ASYNC_ONLY = "@Transactional runs it in a transaction that ends when its promise settles: " +
  "declare it async";

/**
 * Runs the method in a transaction of a datasource (the primary one unless `datasource` names
 * another), as `options` ask: Spring's propagation, `readOnly`, `timeout` (seconds) and rollback
 * rules, rolling back on any error by default. On a class, every async method the class declares
 * is transactional (a method's own `@Transactional` wins). A method must be declared `async`: the
 * transaction ends when its promise settles.
 *
 * Only beans the container built are transactional, and only with `bootstrap({ data: data() })`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/data.md#transactional
 */
export function Transactional(options?: TransactionalOptions): TransactionalDecorator {
  const checked = checkTransactionOptions(options, "@Transactional", ["datasource"]);
  const datasource = (options as TransactionalOptions | undefined)?.datasource;
  if (datasource !== undefined && (typeof datasource !== "string" || datasource === "")) {
    throw new TypeError(
      `@Transactional: datasource must be a datasource's name, got ${datasource}`,
    );
  }
  return (value, context) => {
    checkDecoratorCall("@Transactional", value, context);
    const entry = ownEntry(
      context.metadata,
      TRANSACTIONAL,
      () => new Map<string, TransactionalOptions>(),
    );
    if (context.kind === "method") {
      const where = `@Transactional on ${String(context.name)}`;
      if (context.static || context.private) {
        throw new TypeError(`${where}: it runs public instance methods in a transaction only`);
      }
      if (!declaredAsync(value)) throw new TypeError(`${where}: it is not async; ${ASYNC_ONLY}`);
      entry.set(String(context.name), checked);
      interceptMethod(context, [TransactionInterceptor as Class], ASYNC_ONLY);
      return;
    }
    const cls = value as Class;
    for (const name of Object.getOwnPropertyNames(cls.prototype)) {
      const method = Object.getOwnPropertyDescriptor(cls.prototype, name)?.value;
      if (name === "constructor" || typeof method !== "function" || entry.has(name)) continue;
      if (!declaredAsync(method)) {
        throw new TypeError(
          `@Transactional on class ${cls.name}: ${cls.name}.${name}() is not async; ${ASYNC_ONLY}, ` +
            "or move it out of the class",
        );
      }
      entry.set(name, checked);
      interceptMethod(
        {
          kind: "method",
          name,
          static: false,
          private: false,
          metadata: context.metadata,
        } as ClassMethodDecoratorContext,
        [TransactionInterceptor as Class],
        ASYNC_ONLY,
      );
    }
  };
}

/** The `@Transactional` methods of a bean's classes, each with its options (for the checks). */
export function transactionalMethods(
  bean: unknown,
): { readonly where: string; readonly options: TransactionalOptions }[] {
  const found = new Map<string, { where: string; options: TransactionalOptions }>();
  for (const cls of classesOf(bean)) {
    for (
      const [name, options] of entryOf<Map<string, TransactionalOptions>>(cls, TRANSACTIONAL) ?? []
    ) {
      if (!found.has(name)) found.set(name, { where: `${cls.name}.${name}()`, options });
    }
  }
  return [...found.values()];
}

// The options of `method` on `target`: the most derived class's that declares them.
function optionsOf(target: object, method: string): TransactionalOptions {
  for (const cls of classesOf(target)) {
    const options = entryOf<Map<string, TransactionalOptions>>(cls, TRANSACTIONAL)?.get(method);
    if (options !== undefined) return options;
  }
  return {};
}

/** Runs each `@Transactional` call in its datasource's transaction. */
class TransactionInterceptor implements MethodInterceptor {
  readonly #clients: ReadonlyMap<string, SqlClient>;
  readonly #primary: SqlClient;
  // Each method's client and options: the options are the class's, checked when it was decorated.
  readonly #plans = new MethodPlans<Plan>();

  constructor(clients: ReadonlyMap<string, SqlClient>, primary: SqlClient) {
    this.#clients = clients;
    this.#primary = primary;
  }

  static "thaw.provided": BeanProvider = async (support: BeanSupport) => {
    const clients = new Map<string, SqlClient>();
    for (const bean of support.beans()) {
      if (bean.instance instanceof SqlClient) clients.set(bean.instance.name, bean.instance);
    }
    if (clients.size === 0) {
      throw new DefinitionError(
        "@Transactional runs methods in transactions of the datasources, which need data " +
          'access: import { data } from "@thaw/thaw/data" and pass bootstrap({ data: data() })',
      );
    }
    const primary = await support.resolve(SqlClient, "@Transactional", "the transactions");
    return new TransactionInterceptor(clients, primary as SqlClient);
  };

  intercept({ target, method }: MethodInvocation, next: () => unknown): Promise<unknown> {
    let plan: Plan;
    try {
      plan = this.#plan(target, method);
    } catch (error) {
      return Promise.reject(error);
    }
    return transactionNamed(plan.client, next as () => Promise<unknown>, plan.options, plan.where);
  }

  #plan(target: object, method: string): Plan {
    return this.#plans.of(target, method, (type) => {
      const { datasource, ...options } = optionsOf(target, method);
      const client = datasource === undefined ? this.#primary : this.#clients.get(datasource);
      // bootstrap refuses a @Transactional naming no datasource before any call can come.
      if (client === undefined) {
        throw new DataError({
          datasource: String(datasource),
          reason: "transaction",
          message: `no such datasource, for @Transactional on ${method}()`,
        });
      }
      const where = `${(type as { name?: string }).name || "(anonymous)"}.${method}()`;
      // bootstrap refuses it first (data_setup.ts); a bean made beside the container reaches here.
      checkIsolation(client, options.isolation, `@Transactional on ${where}`);
      return { client, options, where };
    });
  }
}

interface Plan {
  readonly client: SqlClient;
  readonly options: TransactionOptions;
  /** The method, as errors and its status name it: `Billing.charge()`. */
  readonly where: string;
}
