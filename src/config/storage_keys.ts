/**
 * The keys of `@thaw/thaw/storage`: `storage`, a list of stores, read and checked by its own
 * module, declared here so that an app that does not import it neither carries nor checks them.
 *
 * @module
 */
import { declareKeys, type KeyDeclaration } from "./thaw_keys.ts";

/** The object storage's keys. */
export const STORAGE_KEYS = {
  // A list of stores (`- name: uploads`, `url: s3://bucket`...), read by the feature.
  "storage": {
    type: "feature",
  },
} as const satisfies Readonly<Record<string, KeyDeclaration>>;

declareKeys(STORAGE_KEYS);
