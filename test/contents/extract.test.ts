import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExtractor,
  type ExtractedPage,
  ExtractionFailure,
  type Extractor,
} from '../../src/contents/extract/index.js';
import { makePdf } from './pdf-file.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/pages/${name}`, import.meta.url), 'utf8');

const NEWS_URL = 'https://gazette.example/news/2026/11/18/story.html';
const DOCS_URL = 'https://docs.ferrydb.example/v2.4/guide/retries.html';
const GERMAN_URL = 'https://stadtanzeiger.example/lokales/radwege';

let extractor: Extractor;

beforeAll(() => {
  // A generous time limit: these pages are small, and the machine may be shared.
  extractor = createExtractor({ threads: 2, timeoutMs: 20_000, maxQueue: 16 });
});
afterAll(async () => {
  await extractor.close();
});

const html = (text: string, url: string, format: 'markdown' | 'text'): Promise<ExtractedPage> =>
  extractor.extract({ kind: 'html', text, url, format });

describe('a news article with its boilerplate', () => {
  it('keeps the article: paragraphs, headings, list items and the quote', async () => {
    const page = await html(fixture('news-article.html'), NEWS_URL, 'markdown');
    expect(page.content).toContain('The city council has approved funding for a 4.2 km flood barrier');
    expect(page.content).toContain('## What the barrier will do');
    expect(page.content).toMatch(/^- +Glass flood walls along Harbour Street/m);
    expect(page.content).toMatch(/^> “For the first time, people in Quayside/m);
    expect(page.content).toContain('A public exhibition of the final design opens at the Central Library');
  });

  it('leaves out navigation, the cookie banner, share buttons, related stories, comments, caption and footer', async () => {
    const page = await html(fixture('news-article.html'), NEWS_URL, 'markdown');
    for (const boilerplate of [
      'Subscribe for £1 a week',
      'We use cookies',
      'Accept all cookies',
      'Share on Facebook',
      'Email this story',
      'Related stories',
      'River levels hit record high',
      'harbourwatcher',
      'Where is the money for the west bank?',
      'Photo: Gazette archive',
      'All rights reserved',
      'Privacy policy',
      'Skip to content',
    ]) {
      expect(page.content).not.toContain(boilerplate);
    }
  });

  it("reads the page's metadata", async () => {
    const page = await html(fixture('news-article.html'), NEWS_URL, 'text');
    expect(page.title).toBe('City council approves riverside flood barrier');
    expect(page.byline).toContain('Maria Okafor');
    expect(page.siteName).toBe('The Harbour Gazette');
    expect(page.published).toBe('2026-11-18T07:45:00Z');
    expect(page.language).toBe('en-US');
    expect(page.excerpt).toBe('The council voted 9 to 2 to fund a 4.2 km barrier along the east bank.');
    expect(page.canonicalUrl).toBe('https://gazette.example/news/2026/11/18/council-approves-flood-barrier');
  });

  it('makes relative links absolute against the final URL', async () => {
    const page = await html(fixture('news-article.html'), NEWS_URL, 'markdown');
    expect(page.content).toContain(
      '[the history of flooding in Quayside](https://gazette.example/news/2026/11/flood-history/)',
    );
  });
});

describe('a documentation page', () => {
  it('writes the table as a GitHub-flavoured Markdown table', async () => {
    const page = await html(fixture('docs-page.html'), DOCS_URL, 'markdown');
    expect(page.content).toMatch(/^\| Error \| Code \| Default attempts \|$/m);
    expect(page.content).toMatch(/^\| -+ \| -+ \| -+ \|$/m);
    expect(page.content).toMatch(/^\| Serialization conflict \| F4001 \| 5 +\|$/m);
  });

  it('keeps the code block fenced with its language, and inline code', async () => {
    const page = await html(fixture('docs-page.html'), DOCS_URL, 'markdown');
    expect(page.content).toContain(
      '```python\nfrom ferrydb import Client, RetryPolicy\n\npolicy = RetryPolicy(attempts=4, base_delay=0.05, max_delay=2.0)',
    );
    expect(page.content).toContain('Pass a `RetryPolicy` when you open the client');
  });

  it("resolves links against the page's <base href>, and reads its canonical URL", async () => {
    const page = await html(fixture('docs-page.html'), DOCS_URL, 'markdown');
    expect(page.content).toContain(
      '[the error reference](https://docs.ferrydb.example/v2.4/api/errors.html#transient)',
    );
    expect(page.canonicalUrl).toBe('https://docs.ferrydb.example/latest/guide/retries/');
  });

  it('leaves out the side navigation, the search box, breadcrumbs and the footer', async () => {
    const page = await html(fixture('docs-page.html'), DOCS_URL, 'markdown');
    for (const boilerplate of [
      'Installation',
      'API reference',
      'Search docs',
      'Docs »',
      'Built with Sphinx',
      'Previous',
    ]) {
      expect(page.content).not.toContain(boilerplate);
    }
  });

  it('in text format has no markup: paragraphs separated by blank lines, table rows as lines', async () => {
    const page = await html(fixture('docs-page.html'), DOCS_URL, 'text');
    expect(page.content).not.toMatch(/[<>`|#]|\]\(|```|^\s*[-*] /m);
    expect(page.content).toContain('\n\nRetried errors\n\nOnly errors that leave the database unchanged are retried.');
    expect(page.content).toContain('Connection lost\tF0801\t3\nSerialization conflict\tF4001\t5');
    expect(page.content).toContain('see the error reference for the full list of codes');
    expect(page.content).toContain(
      'from ferrydb import Client, RetryPolicy\n\npolicy = RetryPolicy(attempts=4, base_delay=0.05, max_delay=2.0)\nclient = Client(',
    );
  });
});

describe('a page in German', () => {
  it('keeps the article with its characters and names the language', async () => {
    const page = await html(fixture('german-article.html'), GERMAN_URL, 'text');
    expect(page.language).toBe('de');
    expect(page.siteName).toBe('Stadtanzeiger Nord');
    expect(page.content).toContain('Die größten Änderungen betreffen die Königsstraße');
    expect(page.content).toContain('Kritik aus dem Einzelhandel');
    for (const boilerplate of ['Jetzt abonnieren', 'Wir verwenden Cookies', 'Zustimmen', 'Impressum', 'Startseite']) {
      expect(page.content).not.toContain(boilerplate);
    }
  });
});

describe('other kinds of page', () => {
  it('reads a plain text page as it is, in both formats', async () => {
    const text = 'Release notes\r\n\r\n\r\n\r\nVersion 2.4 adds retries.   \r\nIt also fixes a leak.\r\n';
    for (const format of ['text', 'markdown'] as const) {
      const page = await extractor.extract({ kind: 'text', text, url: 'https://x.example/notes.txt', format });
      expect(page.content).toBe('Release notes\n\nVersion 2.4 adds retries.\nIt also fixes a leak.');
    }
  });

  it("reads a PDF's text in page order and its title from the metadata", async () => {
    const pdf = makePdf(
      ['First page: the summary.', 'Second page: the method.', 'Third page: the results.'],
      'Annual report 2026',
    );
    const page = await extractor.extract({
      kind: 'pdf',
      bytes: pdf,
      url: 'https://x.example/report.pdf',
      format: 'text',
    });
    expect(page.title).toBe('Annual report 2026');
    expect(page.content).toBe('First page: the summary.\n\nSecond page: the method.\n\nThird page: the results.');
  });

  it('reads at most 50 pages of a PDF', async () => {
    const pdf = makePdf(
      Array.from({ length: 53 }, (_, i) => `Page number ${i + 1}.`),
      'Long',
    );
    const page = await extractor.extract({
      kind: 'pdf',
      bytes: pdf,
      url: 'https://x.example/long.pdf',
      format: 'text',
    });
    expect(page.content).toContain('Page number 50.');
    expect(page.content).not.toContain('Page number 51.');
    expect(page.content.split('\n\n')).toHaveLength(50);
  });

  it('answers no_content for a page with nothing readable, and for a file that is not a PDF', async () => {
    const empty = extractor.extract({
      kind: 'html',
      text: '<html><body><script>app()</script></body></html>',
      url: NEWS_URL,
      format: 'text',
    });
    await expect(empty).rejects.toBeInstanceOf(ExtractionFailure);
    await expect(empty).rejects.toMatchObject({ reason: 'no_content' });
    const notPdf = extractor.extract({
      kind: 'pdf',
      bytes: new TextEncoder().encode('not a pdf'),
      url: NEWS_URL,
      format: 'text',
    });
    await expect(notPdf).rejects.toMatchObject({ reason: 'no_content' });
  });

  it('reads an HTML fragment without <html> or <body>', async () => {
    const page = await html(
      '<p>Just one paragraph, with <a href="/more">a link</a>.</p>',
      'https://x.example/a/b',
      'markdown',
    );
    expect(page.content).toBe('Just one paragraph, with [a link](https://x.example/more).');
  });
});
