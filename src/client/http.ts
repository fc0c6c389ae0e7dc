/**
 * Minimal HTTP client for the hosted-style APIs: `Authorization: Token <t>`, JSON bodies, errors taken
 * from the `{status:{code, user_message, developer_message}}` envelope so messages say what to fix.
 */
export interface ClientConfig {
  baseUrl: string;
  token: string;
  accountId: string | number;
}

export class ApiClientError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export class ApiClient {
  readonly base: string;
  constructor(readonly config: ClientConfig) {
    this.base = config.baseUrl.replace(/\/+$/, '');
  }

  async raw(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Token ${this.config.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      const cause = (e as { cause?: Error }).cause;
      throw new ApiClientError(0, `cannot reach ${this.base}: ${cause?.message ?? (e as Error).message}`);
    }
    if (!res.ok) {
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      const st = (parsed as { status?: { user_message?: string; developer_message?: string } } | undefined)?.status;
      const detail = st?.developer_message && st.developer_message !== st.user_message ? ` (${st.developer_message})` : '';
      throw new ApiClientError(res.status, `${method} ${path}: HTTP ${res.status}: ${st?.user_message ?? text.slice(0, 200)}${detail}`, parsed);
    }
    return res;
  }

  async json<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.raw(method, path, body);
    return (await res.json()) as T;
  }
}
