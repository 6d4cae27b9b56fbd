/**
 * Object storage: `storage()` for `bootstrap({ storage })`, and `ObjectStorage`, the bean of each
 * store: on the disk by default (`file:./data/storage`), in an S3-compatible bucket (`s3://`) or
 * in Cloudflare R2 (`r2:<BINDING>`), one API for all. Bodies stream end to end: an upload is
 * never held whole, and a write that fails leaves no half object.
 *
 * Apart from the default entry point, so that an app that does not use it carries none of it.
 *
 * @example A store on the disk, and a download of part of a file
 * ```ts
 * import assert from "node:assert/strict";
 * import { bootstrap } from "@thaw/thaw";
 * import { ObjectStorage, storage } from "@thaw/thaw/storage";
 *
 * const folder = await Deno.makeTempDir();
 * const app = await bootstrap({
 *   config: { storage: [{ name: "files", url: `file:${folder}` }] },
 *   storage: storage(),
 * });
 * const files = app.getBean(ObjectStorage);
 * await files.put("report.txt", "0123456789");
 * const answer = await files.response(
 *   "report.txt",
 *   new Request("http://localhost/", { headers: { range: "bytes=2-4" } }),
 * );
 * assert.equal(answer.status, 206);
 * assert.equal(await answer.text(), "234");
 * await app.close();
 * await Deno.remove(folder, { recursive: true });
 * ```
 *
 * @see https://github.com/thaw/thaw/blob/main/docs/storage.md
 *
 * @module
 */
export { storage } from "./src/storage/storage_setup.ts";
export type { StorageFeature } from "./src/storage/storage_feature.ts";
export { ObjectStorage, type StorageBody } from "./src/storage/object_storage.ts";
export {
  StorageError,
  type StorageErrorKind,
  type StorageOperation,
} from "./src/storage/storage_error.ts";
export type {
  ByteRange,
  ListedObject,
  ObjectBody,
  ObjectInfo,
  StorageFaultKind,
  StoreKind,
} from "./src/storage/storage_driver.ts";
export type {
  GetOptions,
  ListOptions,
  PutOptions,
  SignedUrlOptions,
} from "./src/storage/storage_options.ts";
