/** Whether a value can be a fetch body as it is (bytes, a stream, a blob or a form). */
export function isBodyInit(body: unknown): body is BodyInit {
  return body instanceof Uint8Array || body instanceof ArrayBuffer ||
    body instanceof ReadableStream || body instanceof Blob || body instanceof FormData ||
    body instanceof URLSearchParams;
}
