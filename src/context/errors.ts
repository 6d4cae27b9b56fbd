/**
 * Two beans share a name. Only one bean may have a name: notably, only one `errorController`.
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#duplicatebeanerror
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
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#nosuchbeanerror
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
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#circulardependencyerror
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
 * @see https://github.com/thaw/thaw/blob/main/docs/beans-and-configuration.md#definitionerror
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
