import XMLBuilder from "fast-xml-builder";
import { qName } from "xml-naming";

const builder = new XMLBuilder({
  // Property names become element names; an invalid one would make the document unparseable, so
  // it is refused rather than written.
  sanitizeName: (name: string) => {
    if (!qName(name)) throw new TypeError(`Cannot write "${name}" as an XML element name`);
    return name;
  },
});

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/**
 * Serialises a value as an XML document. An object with exactly one key gives the root element;
 * anything else (several keys, an array, a scalar) is wrapped in `<response>`. A string is taken
 * to be XML already and sent as it is.
 */
export function toXml(body: unknown): string {
  if (typeof body === "string") return body;
  const single = body !== null && typeof body === "object" && !Array.isArray(body) &&
    Object.keys(body).length === 1;
  return DECLARATION + builder.build(single ? body : { response: body });
}
