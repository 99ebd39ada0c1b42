/** Thin fetch wrappers for tests: real HTTP, JSON in and out. */
export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function request<T = any>(url: string, init: { method?: string; token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {}): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | undefined;
  if (init.raw !== undefined) body = init.raw;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method: init.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = text ? JSON.parse(text) : undefined; } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

let userCounter = 0;
export async function registerUser(base: string, opts: { ip?: string; email?: string; password?: string; name?: string } = {}) {
  userCounter += 1;
  const email = opts.email ?? `user${userCounter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const password = opts.password ?? 'correct horse battery';
  const res = await request(`${base}/api/v1/auth/register`, {
    body: { email, password, name: opts.name ?? `User ${userCounter}` },
    headers: opts.ip ? { 'x-forwarded-for': opts.ip } : {},
  });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  return { email, password, token: res.body.token as string, refreshToken: res.body.refreshToken as string, user: res.body.user as { id: string; email: string; name: string; plan: string } };
}
