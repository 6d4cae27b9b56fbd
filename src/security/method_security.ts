/**
 * Method security: `@Secured(...authorities)`, `@PreAuthorize(check)` and
 * `@PostAuthorize(check)` on any bean's methods, controllers' included, run by {@linkcode MethodSecurityInterceptor} through the interceptor
 * seam. It runs outermost (its `thaw.order`, -500, is below `@Async`'s): a call is checked where
 * it is made, with its caller, before `@Async` queues it (a refusal holds no slot), before
 * `@Retryable` (a refusal is not retried) and outside `@Transactional`, as Spring runs method
 * security outside its transaction advice: a refused call begins nothing. `@PostAuthorize`'s check
 * therefore runs once the method's transaction has committed, as Spring's does by default: it
 * keeps a result from the caller, it does not undo a write.
 *
 * @module
 */
import type { Class } from "../context/class.ts";
import { entryChain, entryOf as ownEntryOf, ownEntry } from "../context/class_record.ts";
import {
  type MethodInterceptor,
  type MethodInvocation,
  UseInterceptors,
} from "../context/interceptors.ts";
import { MethodPlans } from "../context/method_plans.ts";
import { AccessDeniedError } from "./access_denied_error.ts";
import type { Challenges } from "./challenges.ts";
import { permittingClass } from "./permit_all.ts";
import { type Authentication, SecurityContext } from "./security_context.ts";
import { type AccessDenial, NO_EVENTS, type SecurityEvents } from "./authentication_events.ts";

type Check = (caller: Authentication, ...args: unknown[]) => boolean | Promise<boolean>;
type ResultCheck = (
  caller: Authentication,
  result: unknown,
  ...args: unknown[]
) => boolean | Promise<boolean>;

interface SecuredEntry {
  type?: readonly string[];
  readonly methods: Map<string, readonly string[]>;
  readonly checks: Map<string, Check[]>;
  readonly resultChecks: Map<string, ResultCheck[]>;
}

const SECURED = Symbol("thaw.secured");

const entryOf = (metadata: DecoratorMetadataObject): SecuredEntry =>
  ownEntry(
    metadata,
    SECURED,
    () => ({ methods: new Map(), checks: new Map(), resultChecks: new Map() }),
  );

/** What {@linkcode Secured} returns: a decorator for a bean class or one of its methods. */
export type SecuredDecorator = (
  value: unknown,
  context: ClassDecoratorContext | ClassMethodDecoratorContext,
) => void;

/**
 * The caller must hold one of `authorities` (`SCOPE_orders:write`, `ROLE_ADMIN`) to call the
 * method, or any method of the class (a method's own `@Secured` replaces its class's). Refused:
 * an `AccessDeniedError`, 403 at the edge of a request (`insufficient_scope` with the scopes
 * when they are `SCOPE_` ones), 401 when there is no caller (a `@Scheduled` run) unless
 * `@PermitAll()` is on the method. Needs `bootstrap({ security: security() })`.
 *
 * The example, which the docs' checks run (a decorator line cannot sit in a JSDoc example), is in
 * https://github.com/thaw/thaw/blob/main/docs/security.md.
 */
export function Secured(...authorities: string[]): SecuredDecorator {
  if (authorities.length === 0 || authorities.some((a) => typeof a !== "string" || a === "")) {
    throw new TypeError('@Secured(...authorities): give one or more, such as "ROLE_ADMIN"');
  }
  const intercept = UseInterceptors(MethodSecurityInterceptor as Class<MethodInterceptor>);
  return (value, context) => {
    intercept(value, context);
    const entry = entryOf(context.metadata);
    if (context.kind === "class") entry.type = authorities;
    else entry.methods.set(String(context.name), authorities);
  };
}

/**
 * What {@linkcode PreAuthorize} returns: a decorator for a method whose first arguments are the
 * check's (a check may take fewer than the method).
 */
export type PreAuthorizeDecorator<A extends unknown[]> = <
  This,
  Args extends [...A, ...unknown[]],
  R,
>(
  value: (this: This, ...args: Args) => R,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: Args) => R>,
) => void;

/**
 * The method runs only when `check(caller, ...args)` holds: it gets the caller and the method's
 * own arguments, typed as the method takes them. Refused (or no caller): an `AccessDeniedError`,
 * 403 at the edge of a request (401 without a caller). A check that answers with a promise makes
 * the call answer with one: give it to `async` methods. Needs `bootstrap({ security: security() })`.
 *
 * The example, which the docs' checks run (a decorator line cannot sit in a JSDoc example), is in
 * https://github.com/thaw/thaw/blob/main/docs/security.md.
 */
export function PreAuthorize<A extends unknown[]>(
  check: (caller: Authentication, ...args: A) => boolean | Promise<boolean>,
): PreAuthorizeDecorator<A> {
  if (typeof check !== "function") {
    throw new TypeError("@PreAuthorize(check): give a function (caller, ...args) => boolean");
  }
  const intercept = UseInterceptors(MethodSecurityInterceptor as Class<MethodInterceptor>);
  return (value, context) => {
    intercept(value, context as ClassMethodDecoratorContext);
    const checks = entryOf(context.metadata).checks;
    const name = String(context.name);
    checks.set(name, [...(checks.get(name) ?? []), check as Check]);
  };
}

/**
 * What {@linkcode PostAuthorize} returns: a decorator for a method returning `R` (or a promise of
 * it) whose first arguments are the check's.
 */
export type PostAuthorizeDecorator<A extends unknown[], R> = <
  This,
  Args extends [...A, ...unknown[]],
  Result extends R | PromiseLike<R>,
>(
  value: (this: This, ...args: Args) => Result,
  context: ClassMethodDecoratorContext<This, (this: This, ...args: Args) => Result>,
) => void;

/**
 * The method runs, then `check(caller, result, ...args)` decides whether its caller gets what it
 * returned (the value an `async` method resolves). Refused: an `AccessDeniedError`, 403 at the
 * edge of a request, that says nothing of the result, nor does the log line. With no caller at
 * all the method does not run (401), as with `@PreAuthorize`. The check runs after the method's
 * work (and its transaction) is done: it keeps a result from a caller, it does not undo a write.
 * A check that answers with a promise makes the call answer with one. Needs
 * `bootstrap({ security: security() })`.
 *
 * The example, which the docs' checks run (a decorator line cannot sit in a JSDoc example), is in
 * https://github.com/thaw/thaw/blob/main/docs/security.md.
 */
export function PostAuthorize<R, A extends unknown[] = unknown[]>(
  check: (caller: Authentication, result: R, ...args: A) => boolean | Promise<boolean>,
): PostAuthorizeDecorator<A, R> {
  if (typeof check !== "function") {
    throw new TypeError(
      "@PostAuthorize(check): give a function (caller, result, ...args) => boolean",
    );
  }
  const intercept = UseInterceptors(MethodSecurityInterceptor as Class<MethodInterceptor>);
  return (value, context) => {
    intercept(value, context as ClassMethodDecoratorContext);
    const checks = entryOf(context.metadata).resultChecks;
    const name = String(context.name);
    checks.set(name, [...(checks.get(name) ?? []), check as ResultCheck]);
  };
}

/** What one method needs, worked out at its first call. */
interface Plan {
  readonly where: string;
  readonly open: boolean;
  readonly authorities: readonly string[] | undefined;
  readonly checks: readonly Check[];
  readonly resultChecks: readonly ResultCheck[];
}

/** What the interceptor is made with besides the scopes' prefix. */
export interface MethodSecurityOptions {
  /** Told of each refused call; nothing by default. */
  readonly events?: SecurityEvents | undefined;
  /**
   * The challenges of the schemes that are on, read at each refusal: HTTP Basic is known only
   * once the beans are made, after this interceptor. Bearer tokens alone when not given.
   */
  readonly challenges?: (() => Challenges) | undefined;
  /**
   * Told of each refusal, naming the method and why (`Orders.remove(): access denied
   * (authority)`): what the client's answer leaves out, for the server's log.
   */
  readonly onDenied?: ((line: string) => void) | undefined;
}

/** Checks each call of a method `@Secured` or `@PreAuthorize` guards; registered by `security()`. */
export class MethodSecurityInterceptor implements MethodInterceptor {
  /** Outermost: see the module's note. */
  static "thaw.order": number = -500;
  /** Said when the decorators are used without `security()`. */
  static "thaw.missing" =
    '@Secured, @PreAuthorize and @PostAuthorize need the security feature: import { security } from "@thaw/thaw/security" and pass bootstrap({ security: security() })';

  readonly #plans = new MethodPlans<Plan>();
  readonly #prefix: string;
  readonly #events: SecurityEvents;
  readonly #challenges: () => Challenges | undefined;
  readonly #onDenied: (line: string) => void;

  /**
   * @param scopePrefix the prefix of scope authorities (`authority-prefix`, `SCOPE_`)
   * @param options the refusals' events and challenges
   */
  constructor(scopePrefix: string, options: MethodSecurityOptions = {}) {
    this.#prefix = scopePrefix;
    this.#events = options.events ?? NO_EVENTS;
    this.#challenges = options.challenges ?? (() => undefined);
    this.#onDenied = options.onDenied ?? (() => {});
  }

  intercept({ target, method, args }: MethodInvocation, next: () => unknown): unknown {
    const plan = this.#plans.of(target, method, (type) => planOf(type as Class, method));
    if (plan.open) return next();
    const caller = SecurityContext.current();
    if (caller === undefined) return this.#deny(plan, "no-caller");
    const { authorities } = plan;
    if (authorities !== undefined && !authorities.some((a) => caller.authorities.includes(a))) {
      // Scopes are a bearer token's: a caller of another scheme (no claims: HTTP Basic, an API
      // key) is not told to get one.
      const bearer = Object.keys(caller.claims).length > 0;
      const scopes = !bearer ? undefined : authorities
        .filter((a) => a.startsWith(this.#prefix)).map((a) => a.slice(this.#prefix.length));
      return this.#deny(plan, "authority", scopes);
    }
    const ran = runChecks(plan, caller, args, 0, next, () => this.#deny(plan, "check"));
    if (plan.resultChecks.length === 0) return ran;
    // The result is never named: not in the error, not in the log line.
    const refuse = () => this.#deny(plan, "result");
    if (ran instanceof Promise) {
      return ran.then((result) => runResultChecks(plan, caller, result, args, 0, refuse));
    }
    // A thenable that is no promise (a query builder that runs when awaited) holds no result yet,
    // and handing it on would let its rows through unchecked.
    if (isThenable(ran)) {
      throw new TypeError(
        `${plan.where}: @PostAuthorize cannot check a result that runs when awaited (a query ` +
          "builder): make the method async and return the awaited rows",
      );
    }
    return runResultChecks(plan, caller, ran, args, 0, refuse);
  }

  #deny(plan: Plan, reason: AccessDenial, scopes?: readonly string[]): never {
    this.#events.denied(reason);
    this.#onDenied(`${plan.where}: access denied (${reason})`);
    throw new AccessDeniedError(plan.where, reason !== "no-caller", scopes, this.#challenges());
  }
}

// The checks from `i` on, synchronously while they answer so, then the call.
function runChecks(
  plan: Plan,
  caller: Authentication,
  args: unknown[],
  i: number,
  next: () => unknown,
  refuse: () => never,
): unknown {
  for (; i < plan.checks.length; i++) {
    const held = plan.checks[i](caller, ...args);
    if (held instanceof Promise) {
      const from = i + 1;
      return held.then((ok) => {
        if (ok !== true) refuse();
        return runChecks(plan, caller, args, from, next, refuse);
      });
    }
    if (held !== true) refuse();
  }
  return next();
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}

// The result's checks from `i` on, as `runChecks` runs its own; then the result.
function runResultChecks(
  plan: Plan,
  caller: Authentication,
  result: unknown,
  args: unknown[],
  i: number,
  refuse: () => never,
): unknown {
  for (; i < plan.resultChecks.length; i++) {
    const held = plan.resultChecks[i](caller, result, ...args);
    if (held instanceof Promise) {
      const from = i + 1;
      return held.then((ok) => {
        if (ok !== true) refuse();
        return runResultChecks(plan, caller, result, args, from, refuse);
      });
    }
    if (held !== true) refuse();
  }
  return result;
}

function planOf(type: Class, method: string): Plan {
  const where = `${type.name}.${method}()`;
  // `@PermitAll()` on the method itself lifts its classes' `@Secured` and what superclasses
  // said of the method; a controller's class-level one opens its routes, not its methods' own
  // checks. Beside it, the method's own checks in the same class still decide, as Spring runs
  // both: a route anyone may reach whose result is checked.
  const permitting = permittingClass(type, method, (cls) => {
    const entry = ownEntryOf<SecuredEntry>(cls, SECURED);
    return entry !== undefined &&
      (entry.methods.has(method) || entry.checks.has(method) || entry.resultChecks.has(method));
  });
  if (permitting !== undefined) {
    const own = ownEntryOf<SecuredEntry>(permitting, SECURED);
    const authorities = own?.methods.get(method);
    const checks = own?.checks.get(method) ?? [];
    const resultChecks = own?.resultChecks.get(method) ?? [];
    const open = authorities === undefined && checks.length === 0 && resultChecks.length === 0;
    return { where, open, authorities, checks, resultChecks };
  }
  const chain = entryChain<SecuredEntry>(type, SECURED);
  let authorities: readonly string[] | undefined;
  for (const entry of chain) authorities = entry.methods.get(method) ?? entry.type ?? authorities;
  // A method's own @Secured, wherever in the chain, replaces the classes'.
  const own = chain.map((entry) => entry.methods.get(method)).filter((a) => a !== undefined);
  if (own.length > 0) authorities = own.at(-1);
  return {
    where,
    open: false,
    authorities,
    checks: chain.flatMap((entry) => entry.checks.get(method) ?? []),
    resultChecks: chain.flatMap((entry) => entry.resultChecks.get(method) ?? []),
  };
}

/**
 * Whether `@Secured` or `@PreAuthorize` checks each call of `type`'s method `method` (and
 * `@PermitAll()` does not lift them): its route's guard must bind the caller they check, even
 * where the route is otherwise open to anyone.
 */
export function methodSecured(type: Class, method: string): boolean {
  const plan = planOf(type, method);
  return !plan.open &&
    (plan.authorities !== undefined || plan.checks.length > 0 || plan.resultChecks.length > 0);
}

/**
 * The authorities `@Secured` asks of `type`'s method `method` (any one of them), as the
 * interceptor reads them; `undefined` when none does, or `@PermitAll()` lifts it. For the document.
 */
export function securedAuthorities(type: Class, method: string): readonly string[] | undefined {
  const plan = planOf(type, method);
  return plan.open ? undefined : plan.authorities;
}
