// A record's headers as one column's bytes. Kafka allows a name to repeat and keeps the order, and
// a value is any bytes: a JSON column would need base64 and lose neither only with care, so the
// headers are written as the wire writes them, lengths then bytes, behind a version byte that
// lets a later format be told apart from rows an older Thaw left.

const VERSION = 1;

/** The headers of a record as the outbox table's `headers` column holds them. */
export function encodeHeaders(headers: readonly (readonly [string, Uint8Array])[]): Uint8Array {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  let size = 1 + 4;
  for (const [name, value] of headers) {
    const bytes = encoder.encode(name);
    parts.push(bytes, value);
    size += 8 + bytes.byteLength + value.byteLength;
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out[0] = VERSION;
  view.setUint32(1, headers.length);
  let at = 5;
  for (const part of parts) {
    view.setUint32(at, part.byteLength);
    out.set(part, at + 4);
    at += 4 + part.byteLength;
  }
  return out;
}

/**
 * The headers `encodeHeaders` wrote in `bytes`; throws, naming `where` (the table and the row's
 * id), for bytes it did not write.
 */
export function decodeHeaders(bytes: Uint8Array, where: string): [string, Uint8Array][] {
  const broken = (why: string) =>
    new Error(`${where}: the headers column cannot be read (${why}): was it written by Thaw?`);
  if (bytes.byteLength < 5) throw broken(`${bytes.byteLength} bytes`);
  if (bytes[0] !== VERSION) throw broken(`format ${bytes[0]}, this Thaw writes ${VERSION}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const count = view.getUint32(1);
  const headers: [string, Uint8Array][] = [];
  let at = 5;
  const take = (): Uint8Array => {
    if (at + 4 > bytes.byteLength) throw broken("cut short");
    const length = view.getUint32(at);
    if (at + 4 + length > bytes.byteLength) throw broken("cut short");
    // A copy: the driver's buffer may be a slice of a larger one it reuses.
    const part = bytes.slice(at + 4, at + 4 + length);
    at += 4 + length;
    return part;
  };
  for (let i = 0; i < count; i++) {
    const name = decoder.decode(take());
    headers.push([name, take()]);
  }
  if (at !== bytes.byteLength) throw broken(`${bytes.byteLength - at} bytes past the last header`);
  return headers;
}
