// The notebook's Markdown parser (console/src/pages/sql-markdown-parse.ts): blocks, inline trees, and links
// that keep their target only when it is http(s).
import { describe, expect, it } from 'vitest';
import { parseBlocks, parseInline, safeHref } from '../../console/src/pages/sql-markdown-parse';

describe('parseBlocks', () => {
  it('splits headings, paragraphs, lists and fenced code', () => {
    const src = [
      '# Weekly report',
      '',
      'Orders by day,',
      'newest first.',
      '',
      '- one',
      '- two',
      '  continued',
      '1. first',
      '2) second',
      '```sql',
      'select *',
      '  from t  # not a heading',
      '```',
      '### C# notes ###',
    ].join('\r\n');
    expect(parseBlocks(src)).toEqual([
      { kind: 'heading', level: 1, text: 'Weekly report' },
      { kind: 'para', text: 'Orders by day, newest first.' },
      { kind: 'list', ordered: false, items: ['one', 'two continued'] },
      { kind: 'list', ordered: true, items: ['first', 'second'] },
      { kind: 'code', text: 'select *\n  from t  # not a heading' },
      { kind: 'heading', level: 3, text: 'C# notes' },
    ]);
  });

  it('keeps an unclosed fence as code to the end, and gives nothing for blank text', () => {
    expect(parseBlocks('```\n<b>x</b>')).toEqual([{ kind: 'code', text: '<b>x</b>' }]);
    expect(parseBlocks('  \n\n')).toEqual([]);
    expect(parseBlocks('#nospace')).toEqual([{ kind: 'para', text: '#nospace' }]);
  });
});

describe('parseInline', () => {
  it('parses code, bold, italic and http(s) links, nested', () => {
    expect(parseInline('a `x*y*` **bold _and it_** *em* [Spark](https://spark.apache.org/docs) z')).toEqual([
      'a ',
      { kind: 'code', text: 'x*y*' },
      ' ',
      { kind: 'strong', children: ['bold ', { kind: 'em', children: ['and it'] }] },
      ' ',
      { kind: 'em', children: ['em'] },
      ' ',
      { kind: 'link', href: 'https://spark.apache.org/docs', children: ['Spark'] },
      ' z',
    ]);
  });

  it('leaves links to other schemes, and HTML, as plain text', () => {
    expect(parseInline('[x](javascript:alert(1)) and [y](data:text/html,hi) <img src=x onerror=alert(1)>')).toEqual([
      '[x](javascript:alert(1)) and [y](data:text/html,hi) <img src=x onerror=alert(1)>',
    ]);
    expect(parseInline('snake_case_name stays')).toEqual(['snake_case_name stays']);
  });

  it('accepts only absolute http and https targets', () => {
    expect(safeHref('http://example.com')).toBe(true);
    expect(safeHref('HTTPS://example.com/a?b=c')).toBe(true);
    for (const bad of ['javascript:alert(1)', '//example.com', '/relative', 'ftp://x', 'https://', 'vbscript:x'])
      expect(safeHref(bad)).toBe(false);
  });
});
