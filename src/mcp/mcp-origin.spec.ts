import { originAllowed } from '@/mcp/mcp-origin';

describe('originAllowed', () => {
  it('lets a request without Origin through (an assistant is not a browser)', () => {
    expect(originAllowed(undefined, 'drey.example:4465', [])).toBe(true);
  });

  it("takes the service's own origin, port included", () => {
    expect(originAllowed('http://127.0.0.1:4465', '127.0.0.1:4465', [])).toBe(true);
    expect(originAllowed('https://drey.example', 'drey.example', [])).toBe(true);
    expect(originAllowed('http://127.0.0.1:9999', '127.0.0.1:4465', [])).toBe(false);
  });

  it('takes a configured CORS origin, or any with *', () => {
    expect(originAllowed('https://app.example', 'drey.example', ['https://app.example'])).toBe(
      true,
    );
    expect(originAllowed('https://evil.example', 'drey.example', ['https://app.example'])).toBe(
      false,
    );
    expect(originAllowed('https://evil.example', 'drey.example', ['*'])).toBe(true);
  });

  it('refuses what is not an http origin, or not an origin at all', () => {
    expect(originAllowed('null', 'drey.example', [])).toBe(false);
    expect(originAllowed('file://drey.example', 'drey.example', [])).toBe(false);
    expect(originAllowed('http://drey.example/path', 'drey.example', [])).toBe(false);
    expect(originAllowed('http://drey.example', undefined, [])).toBe(false);
  });
});
