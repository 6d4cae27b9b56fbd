import type { BinderDescriptor } from "./binder_descriptor.ts";
import type { ScalarType } from "./scalar_type.ts";
import { type ArgumentResolver, FROM_BODY } from "./argument_resolver.ts";
import { badRequest, compileConverter } from "./convert.ts";
import { readFormBody } from "./form_reader.ts";

// A part's text as sent: a leading byte-order mark is kept, not dropped.
// Pure: a bundle of an app without RequestPart drops it.
const strictUtf8 = /* @__PURE__ */ new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The reader of `RequestPart(name, options)`: a part of the `multipart/form-data` body, a `File`
 * for a file part, else its text, converted.
 */
export function partArgument(
  binder: Extract<BinderDescriptor, { kind: "part" }>,
): ArgumentResolver {
  const { name, required, type } = binder;
  const label = `Request part '${name}'`;
  const convert = type === undefined || type === File
    ? undefined
    : compileConverter(type as ScalarType, label);
  return {
    async: false,
    needsRequest: false,
    resolve: () => FROM_BODY,
    fromBody: {
      partsOnly: true,
      read: readFormBody,
      resolve: (form) => {
        const part = form.part(name);
        if (part === undefined) {
          if (required) throw badRequest(`${label} is required`);
          return undefined;
        }
        if (part.filename !== undefined) {
          if (convert !== undefined) throw badRequest(`${label} must be a value, not a file`);
          // A large file part is in a temporary file already, as a File.
          if (part.file !== undefined) return part.file;
          // RFC 7578, 4.4: a part without a Content-Type is text/plain.
          return new File([part.body.slice()], part.filename, {
            type: part.contentType ?? "text/plain",
          });
        }
        if (type === File) throw badRequest(`${label} must be a file (a part with a filename)`);
        let text: string;
        try {
          text = strictUtf8.decode(part.body);
        } catch {
          throw badRequest(`${label} is not valid UTF-8`);
        }
        return convert === undefined ? text : convert(text);
      },
    },
  };
}
