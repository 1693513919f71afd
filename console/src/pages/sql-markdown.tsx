// A tiny, safe Markdown renderer for notebook cells: it turns the parsed blocks and inline trees of
// sql-markdown-parse.ts into Preact elements (no HTML is ever parsed or injected); links open http(s) targets only.
import type { ComponentChildren } from 'preact';
import { parseBlocks, parseInline, type Inline } from './sql-markdown-parse';

function renderInline(nodes: Inline[]): ComponentChildren[] {
  return nodes.map((n, i) => {
    if (typeof n === 'string') return n;
    switch (n.kind) {
      case 'code':
        return <code key={i}>{n.text}</code>;
      case 'strong':
        return <strong key={i}>{renderInline(n.children)}</strong>;
      case 'em':
        return <em key={i}>{renderInline(n.children)}</em>;
      case 'link':
        return (
          <a key={i} href={n.href} target="_blank" rel="noopener noreferrer">
            {renderInline(n.children)}
          </a>
        );
    }
  });
}

const inline = (text: string) => renderInline(parseInline(text));

/** Cell headings start at h2 (the page's title is the h1). */
function Heading({ level, children }: { level: number; children: ComponentChildren }) {
  switch (Math.min(level + 1, 6)) {
    case 2:
      return <h2>{children}</h2>;
    case 3:
      return <h3>{children}</h3>;
    case 4:
      return <h4>{children}</h4>;
    case 5:
      return <h5>{children}</h5>;
    default:
      return <h6>{children}</h6>;
  }
}

export function Markdown({ source }: { source: string }) {
  const blocks = parseBlocks(source);
  if (blocks.length === 0) return <p class="muted">Empty Markdown cell.</p>;
  return (
    <div class="markdown">
      {blocks.map((b, i) => {
        switch (b.kind) {
          case 'heading':
            return (
              <Heading key={i} level={b.level}>
                {inline(b.text)}
              </Heading>
            );
          case 'para':
            return <p key={i}>{inline(b.text)}</p>;
          case 'code':
            return (
              <pre key={i} class="pre">
                <code>{b.text}</code>
              </pre>
            );
          case 'list': {
            const items = b.items.map((t, j) => <li key={j}>{inline(t)}</li>);
            return b.ordered ? <ol key={i}>{items}</ol> : <ul key={i}>{items}</ul>;
          }
        }
      })}
    </div>
  );
}
