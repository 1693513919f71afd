// The Markdown of notebook cells, parsed into plain data: blocks (headings, paragraphs, bullet and numbered
// lists, fenced code) and inline trees (code, bold, italic, links). Links keep their target only when it is an
// absolute http(s) URL; anything else stays text. Rendering is in sql-markdown.tsx; nothing here is HTML.

export type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'para'; text: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'code'; text: string };

const HEADING = /^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const FENCE = /^\s*(```|~~~)/;

/** Splits the text into blocks, line by line. */
export function parseBlocks(src: string): Block[] {
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) blocks.push({ kind: 'para', text: para.join(' ') });
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence[1]); i++) body.push(lines[i]);
      blocks.push({ kind: 'code', text: body.join('\n') });
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      flush();
      blocks.push({ kind: 'heading', level: h[1].length, text: h[2] });
      continue;
    }
    const item = BULLET.exec(line) ?? NUMBERED.exec(line);
    if (item) {
      flush();
      const ordered = !BULLET.test(line);
      const last = blocks[blocks.length - 1];
      if (last?.kind === 'list' && last.ordered === ordered) last.items.push(item[1]);
      else blocks.push({ kind: 'list', ordered, items: [item[1]] });
      continue;
    }
    if (line.trim() === '') flush();
    else {
      // A line indented under a list item continues it.
      const last = blocks[blocks.length - 1];
      if (!para.length && last?.kind === 'list' && /^\s+\S/.test(line))
        last.items[last.items.length - 1] += ` ${line.trim()}`;
      else para.push(line.trim());
    }
  }
  flush();
  return blocks;
}

// Inline tokens, earliest match wins: `code`, **bold**, __bold__, *italic*, _italic_, [text](target).
const INLINE = /`([^`]+)`|\*\*(.+?)\*\*|__(.+?)__|\*([^*\s][^*]*?)\*|\b_([^_\s][^_]*?)_\b|\[([^\]]+)\]\(([^)\s]+)\)/;

/** Whether a link target is one the console follows: absolute http or https only. */
export const safeHref = (target: string): boolean => /^https?:\/\/[^\s]+$/i.test(target);

/** Inline text as a tree: plain text, code, strong, emphasis, and links whose target is http(s). */
export type Inline =
  | string
  | { kind: 'code'; text: string }
  | { kind: 'strong' | 'em'; children: Inline[] }
  | { kind: 'link'; href: string; children: Inline[] };

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let rest = text;
  while (rest) {
    const m = INLINE.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    if (m.index > 0) out.push(rest.slice(0, m.index));
    const [, code, bold1, bold2, it1, it2, linkText, target] = m;
    if (code !== undefined) out.push({ kind: 'code', text: code });
    else if (bold1 !== undefined || bold2 !== undefined)
      out.push({ kind: 'strong', children: parseInline(bold1 ?? bold2) });
    else if (it1 !== undefined || it2 !== undefined) out.push({ kind: 'em', children: parseInline(it1 ?? it2) });
    else if (safeHref(target)) out.push({ kind: 'link', href: target, children: parseInline(linkText) });
    else out.push(m[0]);
    rest = rest.slice(m.index + m[0].length);
  }
  // Neighbouring plain strings (a refused link and the text around it) become one.
  return out.reduce<Inline[]>((acc, x) => {
    const last = acc[acc.length - 1];
    if (typeof x === 'string' && typeof last === 'string') acc[acc.length - 1] = last + x;
    else acc.push(x);
    return acc;
  }, []);
}
