// What `@Endpoint`, its operations' decorators and `@Selector` record on a class, in the
// actuator's own key of its decorator metadata (the container never reads it).
import type { Class } from "../context/class.ts";
import { entryOf, ownEntry } from "../context/class_record.ts";

/** An operation's kind, as Spring Boot names it: a read is `GET`, a write `POST`, a delete `DELETE`. */
export type OperationKind = "read" | "write" | "delete";

/** A query parameter an operation is given after its selectors' values, Spring Boot's way. */
export interface QueryParameter {
  readonly name: string;
  /** Missing and required: a 400; missing and optional (`"since?"`): `undefined`. */
  readonly required: boolean;
}

/** One operation of an `@Endpoint` class. */
export interface OperationRecord {
  readonly kind: OperationKind;
  readonly methodName: string;
  /** What a read or a delete binds of the query, in the order the method takes them. */
  readonly query: readonly QueryParameter[];
}

/** What the decorators of one class (not its superclasses) recorded. */
export interface EndpointRecord {
  /** `@Endpoint`'s id, once the class decorator has run. */
  id?: string;
  readonly operations: OperationRecord[];
  /** `@Selector`'s path segments, by method. */
  readonly selectors: Map<string, readonly string[]>;
}

const ENDPOINT = Symbol("thaw.endpoint");

/** The record of the class whose decorators receive `metadata`. */
export function ownEndpointRecord(metadata: DecoratorMetadataObject): EndpointRecord {
  return ownEntry<EndpointRecord>(
    metadata,
    ENDPOINT,
    () => ({ operations: [], selectors: new Map() }),
  );
}

/** The record of a class's own `@Endpoint`: a subclass is one only when decorated itself. */
export function endpointRecordOf(cls: Class): EndpointRecord | undefined {
  const record = entryOf<EndpointRecord>(cls, ENDPOINT);
  return record?.id === undefined ? undefined : record;
}
