import { refusedCaller } from '@/mcp/mcp-origin';

const NONE = { corsOrigins: [] };

describe('refusedCaller', () => {
  it('lets a request without Origin through (an assistant is not a browser)', () => {
    expect(refusedCaller({ host: '127.0.0.1:4465', origin: undefined }, NONE)).toBeUndefined();
    expect(refusedCaller({ host: 'drey.example', origin: undefined }, NONE)).toBeUndefined();
  });

  it("takes the service's own origin, port included", () => {
    expect(
      refusedCaller({ host: '127.0.0.1:4465', origin: 'http://127.0.0.1:4465' }, NONE),
    ).toBeUndefined();
    expect(
      refusedCaller({ host: 'drey.example', origin: 'https://drey.example' }, NONE),
    ).toBeUndefined();
    expect(
      refusedCaller({ host: '127.0.0.1:4465', origin: 'http://127.0.0.1:9999' }, NONE),
    ).toContain('may not call the MCP server');
    expect(refusedCaller({ host: undefined, origin: 'http://127.0.0.1:4465' }, NONE)).toBeDefined();
  });

  it('takes a configured CORS origin, or any with *', () => {
    const app = { corsOrigins: ['https://app.example'] };
    expect(
      refusedCaller({ host: 'drey.example', origin: 'https://app.example' }, app),
    ).toBeUndefined();
    expect(
      refusedCaller({ host: 'drey.example', origin: 'https://evil.example' }, app),
    ).toBeDefined();
    const any = { corsOrigins: ['*'] };
    expect(
      refusedCaller({ host: 'drey.example', origin: 'https://evil.example' }, any),
    ).toBeUndefined();
  });

  it('refuses what is not an http origin, or not an origin at all', () => {
    for (const origin of ['null', 'file://drey.example', 'http://drey.example/path']) {
      expect(refusedCaller({ host: 'drey.example', origin }, NONE)).toBeDefined();
    }
  });
});
