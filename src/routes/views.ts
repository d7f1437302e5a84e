import path from 'node:path';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';
import { PROJECT_ROOT } from '../runtime/project-root.js';

/*
 * Server-rendered pages: Eta templates in views/, escaping every `<%= %>` by
 * default. Pages include the shared layout with `<% layout('layout') %>`.
 * Layout data: `title`, `user` ({ username } or null), `csrfToken`,
 * `statusPageEnabled`, `active` (nav key: 'status' | 'keys'); sendPage adds `cspNonce`
 * and `demoMode` (DEMO_MODE: the layout's "Demo data" banner).
 */

export const VIEWS_DIR = path.join(PROJECT_ROOT, 'views');

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

/**
 * Sends a rendered page as HTML, never cached (pages may show secrets). The
 * security headers, Content-Security-Policy included, come from helmet in the
 * pages' context; the templates put its nonces (`it.cspNonce.style`,
 * `it.cspNonce.script`) on their inline <style> and <script> blocks.
 */
export function sendPage(reply: FastifyReply, template: string, data: LayoutData, status = 200): FastifyReply {
  const cspNonce = reply.cspNonce ?? { script: '', style: '' };
  return reply
    .code(status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .send(renderView(template, { ...data, cspNonce, demoMode: reply.server.config.DEMO_MODE }));
}
