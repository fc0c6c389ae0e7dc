/**
 * A strict reader of the XML subset JUnit reports use (declaration, elements, double- or single-quoted
 * attributes, text, the five named entities and character references), for tests: it throws on
 * anything not well-formed (unbalanced or crossed tags, a bare `&` or `<`, an unquoted or repeated
 * attribute, characters XML 1.0 forbids, text outside the root), so a report that a CI server's XML
 * parser would reject fails the test. No XML parser is a dependency of the project.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = '[A-Za-z_:][-A-Za-z0-9_.:]*';
const FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

function unescape(s: string, where: string): string {
  if (s.includes('<')) throw new Error(`bare < in ${where}`);
  return s.replace(/&([^;]*);?/g, (m, ent: string) => {
    if (!m.endsWith(';')) throw new Error(`bare & in ${where}: ${JSON.stringify(m)}`);
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (ent in named) return named[ent]!;
    const num = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(ent);
    if (!num) throw new Error(`unknown entity &${ent}; in ${where}`);
    const cp = num[1]!.startsWith('x') ? parseInt(num[1]!.slice(1), 16) : Number(num[1]);
    const ch = String.fromCodePoint(cp);
    if (FORBIDDEN.test(ch)) throw new Error(`character reference to a forbidden character in ${where}`);
    return ch;
  });
}

export function parseXml(doc: string): XmlElement {
  if (FORBIDDEN.test(doc)) throw new Error('document holds a character XML 1.0 forbids');
  let s = doc.replace(/^<\?xml[^?]*\?>/, '');
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const tag = new RegExp(`^<(/?)(${NAME})((?:\\s+${NAME}\\s*=\\s*(?:"[^"]*"|'[^']*'))*)\\s*(/?)>`);
  while (s.length > 0) {
    const lt = s.indexOf('<');
    const text = lt === -1 ? s : s.slice(0, lt);
    if (text) {
      const top = stack.at(-1);
      if (!top) {
        if (text.trim() !== '') throw new Error(`text outside the root element: ${JSON.stringify(text.slice(0, 40))}`);
      } else top.text += unescape(text, `<${top.name}>`);
    }
    if (lt === -1) break;
    s = s.slice(lt);
    const m = tag.exec(s);
    if (!m) throw new Error(`malformed tag at ${JSON.stringify(s.slice(0, 60))}`);
    const [whole, close, name, rawAttrs, selfClose] = m as unknown as [string, string, string, string, string];
    s = s.slice(whole.length);
    if (close) {
      if (rawAttrs.trim() || selfClose) throw new Error(`malformed end tag </${name}>`);
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name ?? 'nothing'}>`);
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of rawAttrs.matchAll(new RegExp(`(${NAME})\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'g'))) {
      if (a[1]! in attrs) throw new Error(`attribute ${a[1]} repeated on <${name}>`);
      attrs[a[1]!] = unescape(a[2] ?? a[3] ?? '', `${name}@${a[1]}`);
    }
    const el: XmlElement = { name, attrs, children: [], text: '' };
    const parent = stack.at(-1);
    if (parent) parent.children.push(el);
    else if (root) throw new Error('a second root element');
    else root = el;
    if (!selfClose) stack.push(el);
  }
  if (stack.length) throw new Error(`<${stack.at(-1)!.name}> is never closed`);
  if (!root) throw new Error('no root element');
  return root;
}

/** Every element named `name` below `el`, depth first. */
export function findAll(el: XmlElement, name: string): XmlElement[] {
  return el.children.flatMap((c) => [...(c.name === name ? [c] : []), ...findAll(c, name)]);
}
