import { cookieHeader, rememberSetCookies } from '../helpers/cookies.js';

/** A minimal browser-like HTTP client for tests: keeps cookies, never follows redirects. */
export class WebClient {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly base: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  async request(
    path: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...this.headers, ...init.headers };
    if (this.cookies.size) headers.cookie = cookieHeader(this.cookies);
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(this.base + path, {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'manual',
    });
    rememberSetCookies(this.cookies, res.headers.getSetCookie());
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  get(path: string) {
    return this.request(path);
  }

  post(path: string, form: Record<string, string>) {
    return this.request(path, { method: 'POST', form });
  }

  /** The CSRF token in the first form of a page. */
  static csrfToken(html: string): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!match) throw new Error('no CSRF token on the page');
    return match[1]!;
  }

  /** GET /login, then POST the form. */
  async signIn(username: string, password: string, next?: string) {
    const page = await this.get(next ? `/login?next=${encodeURIComponent(next)}` : '/login');
    const form: Record<string, string> = { _csrf: WebClient.csrfToken(page.text), username, password };
    if (next) form.next = next;
    return this.post('/login', form);
  }
}
