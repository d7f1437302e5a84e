export type ExtractFormat = 'markdown' | 'text';

export interface ExtractInput {
  kind: 'html' | 'text' | 'pdf';
  /** The decoded page, for html and text. */
  text?: string;
  /** The raw file, for pdf. */
  bytes?: Uint8Array;
  /** The final URL: links are made absolute against it (and the page's `<base href>`). */
  url: string;
  format: ExtractFormat;
}

export interface ExtractedPage {
  title: string;
  byline: string;
  siteName: string;
  /** ISO 8601, or "". */
  published: string;
  /** BCP 47, or "". */
  language: string;
  excerpt: string;
  /** The page's link rel=canonical, absolute, or "". */
  canonicalUrl: string;
  /** The whole main content in the format asked. */
  content: string;
}
