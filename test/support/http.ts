/** A response with its body read: JSON parsed when the type says so, text otherwise. */
export interface Reply {
  status: number;
  headers: Headers;
  // Bodies are checked field by field in the tests; their shapes are what the tests assert.
  body: any;
  text: string;
}

export async function http(url: string, init: RequestInit = {}): Promise<Reply> {
  const response = await fetch(url, init);
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json');
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: json && text ? JSON.parse(text) : text,
  };
}
