/*
 * The main content as plain text: block elements become paragraphs separated by a blank line, list
 * items and table rows one line each (a row's cells separated by a tab), line breaks kept, the
 * whitespace of inline text collapsed as a browser renders it, preformatted text kept as it is, and
 * no markup at all.
 */

import { type DomElement, type DomNode, ELEMENT_NODE, TEXT_NODE } from './dom.js';

const BLOCKS = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'CAPTION',
  'DD',
  'DETAILS',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'FORM',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'NAV',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'SUMMARY',
  'TABLE',
  'TR',
  'UL',
]);

/** Elements whose text is never content. */
const SKIPPED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'BUTTON', 'SELECT', 'IFRAME', 'OBJECT']);

/** Blocks whose children are lines of one paragraph rather than paragraphs of their own. */
const LINE_BLOCKS = new Set(['LI', 'TR', 'DT', 'DD']);

/** Builds paragraphs from inline runs; a block boundary ends the current paragraph. */
class ParagraphWriter {
  readonly paragraphs: string[] = [];
  private lines: string[] = [];
  private line = '';
  private separator: 'none' | 'line' | 'paragraph' = 'none';

  inline(text: string): void {
    const collapsed = text.replace(/\s+/g, ' ');
    if (!collapsed) return;
    this.flushSeparator(collapsed.trim() !== '');
    if (this.line === '' || this.line.endsWith(' ') || this.line.endsWith('\t'))
      this.line += collapsed.replace(/^ /, '');
    else this.line += collapsed;
  }

  raw(text: string): void {
    if (!text) return;
    this.flushSeparator(true);
    this.line += text;
  }

  cell(): void {
    if (this.line.trim() !== '') this.line = `${this.line.trimEnd()}\t`;
  }

  lineBreak(): void {
    this.endLine();
  }

  /** Ends the paragraph now when the block closes a paragraph, else at the next text (a line). */
  blockBoundary(kind: 'line' | 'paragraph'): void {
    if (kind === 'paragraph' || this.separator === 'paragraph') this.separator = 'paragraph';
    else this.separator = 'line';
  }

  private flushSeparator(hasText: boolean): void {
    if (!hasText || this.separator === 'none') return;
    if (this.separator === 'paragraph') this.endParagraph();
    else this.endLine();
    this.separator = 'none';
  }

  private endLine(): void {
    const line = this.line.replace(/[ \t]+$/, '');
    this.line = '';
    if (line.trim() !== '' || this.lines.length > 0) this.lines.push(line);
  }

  endParagraph(): void {
    this.endLine();
    // Preformatted text brings its own line breaks: those at its edges are not content.
    const paragraph = this.lines.join('\n').replace(/^\n+/, '').trimEnd();
    if (paragraph.trim() !== '') this.paragraphs.push(paragraph);
    this.lines = [];
  }
}

function walk(node: DomNode, out: ParagraphWriter, inPre: boolean): void {
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === TEXT_NODE) {
      const text = child.nodeValue ?? '';
      if (inPre) out.raw(text);
      else out.inline(text);
      continue;
    }
    if (child.nodeType !== ELEMENT_NODE) continue;
    const el = child as DomElement;
    const tag = el.tagName.toUpperCase();
    if (SKIPPED.has(tag)) continue;
    if (tag === 'BR') {
      out.lineBreak();
      continue;
    }
    if (tag === 'TD' || tag === 'TH') {
      walk(el, out, inPre);
      out.cell();
      continue;
    }
    if (!BLOCKS.has(tag)) {
      walk(el, out, inPre);
      continue;
    }
    const kind = LINE_BLOCKS.has(tag) ? 'line' : 'paragraph';
    out.blockBoundary(kind);
    walk(el, out, inPre || tag === 'PRE');
    out.blockBoundary(kind);
  }
}

/** The text of a content element (and its descendants), paragraphs separated by blank lines. */
export function elementToText(root: DomNode): string {
  const out = new ParagraphWriter();
  walk(root, out, false);
  out.endParagraph();
  return out.paragraphs
    .map((p) => p.replace(/\t$/gm, ''))
    .filter((p) => p.trim() !== '')
    .join('\n\n');
}
