// What `@EventListener` records on a class, and where: read back by the multicaster.
import type { Class } from "../context/class.ts";
import type { MethodAccess } from "../context/class_record.ts";

/** One `@EventListener` method, as its decorator recorded it. */
export interface ListenerRecord extends MethodAccess {
  /** The class an event must be an instance of to reach the method. */
  readonly eventClass: Class;
  /** Whether it runs after the publisher's promise has resolved, not awaited by it. */
  readonly async: boolean;
}

/** Where a class keeps its own listeners (not its superclasses'), as declared. */
export const LISTENERS: unique symbol = Symbol("thaw.listeners");
