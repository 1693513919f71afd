// HTTP helpers shared by the tests and the benchmarks (no test-runner imports here).

export interface Reply {
  status: number;
  body: any;
}

/** fetch + JSON. A FormData body goes as multipart, a string as is, an object as JSON. */
export async function request(
  base: string,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body instanceof FormData || typeof body === 'string') init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(base + p, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : '';
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed };
}

/** Like request, but a status other than 200 throws with the body's message; returns the body. */
export async function ok(base: string, method: string, p: string, body?: unknown): Promise<any> {
  const r = await request(base, method, p, body);
  if (r.status !== 200)
    throw new Error(
      `${method} ${p}: HTTP ${r.status}: ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}`,
    );
  return r.body;
}

/** A multipart form of string fields and named files. */
export function form(
  fields: Record<string, string | undefined>,
  files: Record<string, { name: string; content: string | Buffer }[]> = {},
): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) f.append(k, v);
  for (const [k, list] of Object.entries(files))
    for (const file of list) f.append(k, new Blob([file.content]), file.name);
  return f;
}
