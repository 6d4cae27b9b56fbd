// The Standard Schema v1 interface (https://standardschema.dev), which zod, valibot and arktype
// implement. Its authors ask libraries to copy the types rather than depend on a package.

/** A schema any Standard Schema library made. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The standard's properties. */
  readonly "~standard": StandardSchemaV1Props<Input, Output>;
}

/** The standard's properties of a schema. */
export interface StandardSchemaV1Props<Input = unknown, Output = Input> {
  /** The version of the standard. */
  readonly version: 1;
  /** The library that made the schema. */
  readonly vendor: string;
  /** Checks a value; may answer at once or later. */
  readonly validate: (
    value: unknown,
  ) => StandardSchemaV1Result<Output> | Promise<StandardSchemaV1Result<Output>>;
  /** The types, for inference only. */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

/** What `validate` answers. */
export type StandardSchemaV1Result<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaV1Issue> };

/** One problem a schema found. */
export interface StandardSchemaV1Issue {
  /** What is wrong. */
  readonly message: string;
  /** Where, as keys or segments with a key. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** Whether a value is a Standard Schema (arktype's schemas are functions, so both are checked). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return (typeof value === "object" || typeof value === "function") && value !== null &&
    "~standard" in value;
}
