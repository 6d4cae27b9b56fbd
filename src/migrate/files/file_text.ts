const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * A migration file's text: strict UTF-8 (a stray byte is an error, never a replacement character
 * sent to a server), without a leading BOM. Returns `undefined` for bytes that are not UTF-8.
 */
export function decodeFileText(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return undefined;
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
