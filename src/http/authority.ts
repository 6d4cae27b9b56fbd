// Character classes, as one table of bits: the check runs on every request, so it scans in place,
// without a regular expression, a slice or a callback.
const HOST = 1; // an RFC 3986 reg-name character that no WHATWG URL parser forbids in a host
const USERINFO = 2;
const IP_LITERAL = 4;
const DIGIT = 8;
const CLASSES = new Uint8Array(128);
const mark = (chars: string, bit: number) => {
  for (const c of chars) CLASSES[c.charCodeAt(0)] |= bit;
};
mark("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=", HOST);
mark("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:%", USERINFO);
mark("0123456789abcdefABCDEF:.", IP_LITERAL);
mark("0123456789", DIGIT);

function all(text: string, from: number, to: number, bits: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c > 127 || (CLASSES[c] & bits) === 0) return false;
  }
  return true;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

// A host whose last label is a number (`1.2.3.4`, `.80`, `a.0x1`) is an IPv4 address to a URL
// parser, which refuses it unless it is one: only the dotted quad is taken here. Scanned in place,
// without slices: it runs on every request.
function isNameOrIpv4(text: string, from: number, to: number): boolean {
  const end = text.charCodeAt(to - 1) === 0x2e ? to - 1 : to; // one trailing dot is no label
  // The last label, found by stepping back over it (`lastIndexOf` from a point is slow).
  let start = end;
  while (start > from && text.charCodeAt(start - 1) !== 0x2e) start--;
  const hex = end - start >= 2 && text.charCodeAt(start) === 0x30 &&
    (text.charCodeAt(start + 1) | 0x20) === 0x78;
  if (!hex && (start === end || !all(text, start, end, DIGIT))) return true;
  let parts = 0;
  for (let i = from; i <= end; parts++) {
    let j = i;
    let value = 0;
    while (j < end && isDigit(text.charCodeAt(j))) value = value * 10 + text.charCodeAt(j++) - 0x30;
    const digits = j - i;
    if (digits === 0 || digits > 3 || value > 255 || (digits > 1 && text.charCodeAt(i) === 0x30)) {
      return false;
    }
    if (j < end && text.charCodeAt(j) !== 0x2e) return false;
    i = j + 1;
  }
  return parts === 4;
}

/**
 * Whether `text[from, to)` is an authority a server may name itself by: `[userinfo@]host[:port]`,
 * the host a reg-name (no `%`, `:` or brackets; if its last label is a number, a dotted-quad
 * IPv4 address) or a bracketed IPv6 literal, the port at most 65535. Stricter than RFC 3986 where browsers and servers disagree (`%` in a host), so that what
 * passes means the same to every URL parser.
 */
export function isAuthority(text: string, start = 0, to: number = text.length): boolean {
  if (to <= start) return false;
  let from = start;
  // No `@` is a userinfo or host character, so the first one ends the userinfo; a second one
  // fails the host. (`indexOf` forward is several times faster than `lastIndexOf` from a point.)
  const at = text.indexOf("@", start);
  if (at !== -1 && at < to) {
    if (!all(text, from, at, USERINFO)) return false;
    from = at + 1;
  }
  let hostEnd: number;
  if (text.charCodeAt(from) === 0x5b) {
    const close = text.indexOf("]", from);
    if (close === -1 || close >= to || close === from + 1) return false;
    if (!all(text, from + 1, close, IP_LITERAL)) return false;
    // IPv6's grammar is the URL parser's to judge; a bracketed host is rare, so this costs little.
    if (!URL.canParse(`http://${text.slice(from, close + 1)}/`)) return false;
    hostEnd = close + 1;
  } else {
    const colon = text.indexOf(":", from);
    hostEnd = colon === -1 || colon >= to ? to : colon;
    if (hostEnd === from || !all(text, from, hostEnd, HOST)) return false;
    if (!isNameOrIpv4(text, from, hostEnd)) return false;
  }
  if (hostEnd === to) return true;
  if (text.charCodeAt(hostEnd) !== 0x3a) return false;
  if (to - hostEnd - 1 > 5 || !all(text, hostEnd + 1, to, DIGIT)) return false;
  let port = 0;
  for (let i = hostEnd + 1; i < to; i++) port = port * 10 + text.charCodeAt(i) - 0x30;
  return port <= 65535;
}
