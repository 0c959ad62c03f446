/**
 * A browser's part of sign-in, over plain HTTP: follows redirects by hand, keeps each host's
 * cookies, and fills in the issuer's own login form. The Chromium test walks the same pages for real
 * (test/browser/sign-in.ts).
 */
export class SignInClient {
  /** Cookies per host:port, by name (paths are not told apart: every cookie of the host is sent). */
  private readonly jar = new Map<string, Map<string, string>>();
  /** Every `Set-Cookie` the proxy answered with, for checking their attributes. */
  readonly proxySetCookies: string[] = [];

  constructor(private readonly proxyUrl: string) {}

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  setCookie(host: string, name: string, value: string): void {
    const cookies = this.jar.get(host) ?? new Map<string, string>();
    cookies.set(name, value);
    this.jar.set(host, cookies);
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const cookies = [...(this.jar.get(target.host) ?? new Map<string, string>())]
      .map(([name, value]) => `${name}=${value}`)
      .join('; ');
    const headers = new Headers(init.headers);
    if (cookies) headers.set('cookie', cookies);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      if (target.origin === this.proxyUrl) this.proxySetCookies.push(line);
      const [pair, ...attributes] = line.split(';');
      const equals = pair.indexOf('=');
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      const jar = this.jar.get(target.host) ?? new Map<string, string>();
      if (expired) jar.delete(name);
      else jar.set(name, value);
      this.jar.set(target.host, jar);
    }
    return response;
  }

  /** Follows redirects from `url` until a page that is not one; answers it and its address. */
  async follow(url: string, init: RequestInit = {}): Promise<{ response: Response; url: string }> {
    let current = url;
    let response = await this.fetch(current, init);
    for (let hops = 0; response.status >= 300 && response.status < 400 && hops < 20; hops++) {
      current = new URL(response.headers.get('location')!, current).href;
      response = await this.fetch(current);
    }
    return { response, url: current };
  }

  /**
   * Signs in as `login` through the issuer's login page: from the proxy's sign-in address to the page
   * the proxy sends the person to at the end. Answers that last response and its address.
   */
  async signIn(login: string, query = ''): Promise<{ response: Response; url: string }> {
    const page = await this.follow(`${this.proxyUrl}/api/auth/login${query}`);
    const html = await page.response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action || !html.includes('name="login"'))
      throw new Error(`no login form at ${page.url}:\n${html.slice(0, 500)}`);
    const form = new URLSearchParams({ prompt: 'login', login, password: 'any password' });
    return this.follow(new URL(action.replace(/&amp;/g, '&'), page.url).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
  }
}
