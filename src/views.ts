import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';

/*
 * Server-rendered pages: Eta templates in views/, escaping every `<%= %>` by
 * default. Pages include the shared layout with `<% layout('layout') %>`.
 * Layout data: `title`, `user` ({ username } or null), `csrfToken`,
 * `statusPageEnabled`, `active` (nav key: 'status' | 'keys').
 */

export const VIEWS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'views');

const eta = new Eta({ views: VIEWS_DIR, autoEscape: true, cache: true, autoTrim: false });

export interface LayoutData {
  title: string;
  user: { username: string } | null;
  csrfToken?: string;
  statusPageEnabled: boolean;
  active?: string;
  [key: string]: unknown;
}

export function renderView(template: string, data: LayoutData): string {
  return eta.render(template, data);
}

/** Sends a rendered page as HTML with headers suited to pages that may show secrets. */
export function sendPage(reply: FastifyReply, template: string, data: LayoutData, status = 200): FastifyReply {
  return reply
    .code(status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'same-origin')
    .header('X-Frame-Options', 'DENY')
    .header(
      'Content-Security-Policy',
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    )
    .send(renderView(template, data));
}
