import { type Class, entryChain, ownEntry } from "../context/class_record.ts";
import type { ParameterBinder } from "./binder.ts";
import type { MappedMethod } from "./route_table.ts";

/** A handler method and the route it serves, as its mapping decorator recorded it. */
export interface RouteRecord {
  readonly httpMethod: MappedMethod;
  readonly path: string;
  readonly binders: readonly ParameterBinder[];
  readonly methodName: string;
  readonly isStatic: boolean;
  readonly get: (instance: unknown) => unknown;
}

/** What the web layer's decorators say about one class (not its superclasses). */
export interface ControllerRecord {
  prefix?: string;
  readonly routes: RouteRecord[];
}

// The web layer's own key in a class's decorator metadata; the container never reads it.
const ROUTES = Symbol("thaw.routes");

/** The web record of the class whose decorators receive `metadata`. */
export function ownControllerRecord(metadata: DecoratorMetadataObject): ControllerRecord {
  return ownEntry(metadata, ROUTES, () => ({ routes: [] }));
}

/** The web records of a class and its superclasses, the most basic first. */
export function controllerRecordChain(cls: Class): ControllerRecord[] {
  return entryChain(cls, ROUTES);
}
