import type { FastifyHelmetOptions } from '@fastify/helmet';

/*
 * Security headers of the HTML pages (sign-in, API keys, status), set by
 * @fastify/helmet in the pages' own context: the API and the health
 * endpoints never pay for them.
 *
 * The Content-Security-Policy allows nothing by default. The pages' only
 * inline <style> and <script> blocks carry the per-response nonce
 * (reply.cspNonce, passed to the templates by sendPage), so an injected
 * script or style, inline event handler, external resource, frame, plugin,
 * <base> or form posting elsewhere is refused by the browser.
 */

export const PAGE_CSP_DIRECTIVES = {
  'default-src': ["'none'"],
  // helmet appends 'nonce-<script nonce>' and 'nonce-<style nonce>' to these two.
  'script-src': [] as string[],
  'style-src': [] as string[],
  // The browser's favicon request; no page has an image.
  'img-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
};

export const PAGE_SECURITY_HEADERS: FastifyHelmetOptions = {
  enableCSPNonces: true,
  // useDefaults off: no upgrade-insecure-requests (a self-hosted instance may be served over plain HTTP).
  contentSecurityPolicy: { useDefaults: false, directives: PAGE_CSP_DIRECTIVES },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'same-origin' },
  // Only ever honoured over HTTPS; never reaches beyond this host.
  strictTransportSecurity: { maxAge: 365 * 24 * 3600, includeSubDomains: false },
};
