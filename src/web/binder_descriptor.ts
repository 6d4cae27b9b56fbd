import type { Class } from "../context/class.ts";
import type { StandardSchemaV1 } from "../config/standard_schema.ts";
import type { ScalarType } from "./scalar_type.ts";

/**
 * The run time part of a `Binder`. Made by the binder functions only (`PathVariable()`,
 * ...), which give it the code that reads its argument; a copy made with spread or
 * `Object.assign` keeps that code, a descriptor written by hand has none and is refused at
 * start-up.
 */
export type BinderDescriptor =
  | { readonly kind: "path"; readonly name: string; readonly type: ScalarType }
  | {
    readonly kind: "param" | "header";
    readonly name: string;
    readonly type: ScalarType;
    readonly required: boolean;
    readonly hasDefault: boolean;
    readonly default: unknown;
  }
  | { readonly kind: "body"; readonly target: Class | StandardSchemaV1 | undefined }
  | {
    readonly kind: "part";
    readonly name: string;
    /** `File` for a file part, a conversion for a text part, `undefined` for either. */
    readonly type: PartType | undefined;
    readonly required: boolean;
  };

/** What a `RequestPart` takes: `File` for a file part, or a text part's conversion. */
export type PartType = ScalarType | typeof File;
