/*
 * The main content as GitHub-flavoured Markdown: turndown with the GFM plugin (tables,
 * strikethrough, task lists, fenced code with its language). Turndown parses the content's HTML
 * with its own DOM (domino), which has the table API the GFM plugin needs. Images are left out:
 * the content is read as text, and their URLs (often lazy-loading placeholders) are noise there.
 */
import { gfm } from '@joplin/turndown-plugin-gfm';
import TurndownService from 'turndown';

let service: TurndownService | undefined;

function turndown(): TurndownService {
  if (!service) {
    service = new TurndownService({
      headingStyle: 'atx',
      codeBlockStyle: 'fenced',
      bulletListMarker: '-',
      emDelimiter: '_',
      hr: '---',
    });
    service.use(gfm);
    // A rule, not turndown's remove(): its own image rule would come first.
    service.addRule('leaveOutMedia', {
      filter: ['img', 'picture', 'svg', 'video', 'audio', 'source', 'script', 'style'] as TurndownService.TagName[],
      replacement: () => '',
    });
  }
  return service;
}

export function htmlToMarkdown(html: string): string {
  return turndown()
    .turndown(html)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
