/** The answers Thaw gives by itself, as shared responses. */
export const FRAMEWORK_RESPONSES = {
  BadRequest: [400, "A path variable, parameter, header or body that could not be read"],
  NotFound: [404, "No route for the path (any operation's path with unknown segments)"],
  MethodNotAllowed: [405, "The path exists, not with this method; `Allow` lists the methods"],
  ContentTooLarge: [413, "The body is larger than `server.max-body-size`"],
  UnsupportedMediaType: [415, "The body is not `application/json` (or `+json`)"],
  InternalServerError: [500, "The handler failed; the error is logged, not sent"],
} as const satisfies Record<string, readonly [number, string]>;

/**
 * The answers Thaw gives only to operations that read a form body, in the document only when one
 * does (so an app without such operations has the document it always had).
 */
export const FORM_RESPONSES = {
  MultipartTooLarge: [
    413,
    "The body is larger than `server.max-body-size` (a URL-encoded form) or " +
    "`server.multipart.max-request-size`, a file is larger than `server.multipart.max-file-size`, " +
    "or there are more parts than `server.multipart.max-parts`",
  ],
  UnsupportedMultipartType: [
    415,
    "The body is not `multipart/form-data`, or has a `Content-Encoding`",
  ],
  UnsupportedFormEncoding: [
    415,
    "The form body has a `Content-Encoding`, or a `charset` other than UTF-8",
  ],
} as const satisfies Record<string, readonly [number, string]>;

export type FrameworkResponse = keyof typeof FRAMEWORK_RESPONSES | keyof typeof FORM_RESPONSES;

export const ALL_RESPONSES: Record<FrameworkResponse, readonly [number, string]> = {
  ...FRAMEWORK_RESPONSES,
  ...FORM_RESPONSES,
};
