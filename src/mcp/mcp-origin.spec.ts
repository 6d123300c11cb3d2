import { refusedCaller } from '@/mcp/mcp-origin';

const LOCAL = { bindHost: '127.0.0.1', corsOrigins: [] };
const PUBLIC = { bindHost: '0.0.0.0', corsOrigins: [] };

describe('refusedCaller', () => {
  it('lets a request without Origin through (an assistant is not a browser)', () => {
    expect(refusedCaller({ host: '127.0.0.1:4465', origin: undefined }, LOCAL)).toBeUndefined();
    expect(refusedCaller({ host: 'drey.example', origin: undefined }, PUBLIC)).toBeUndefined();
  });

  it('answers a loopback-bound service under a loopback Host only (DNS rebinding)', () => {
    for (const host of ['localhost:4465', '127.0.0.1:4465', '[::1]:4465']) {
      expect(refusedCaller({ host, origin: undefined }, LOCAL)).toBeUndefined();
    }
    expect(refusedCaller({ host: 'evil.example:4465', origin: undefined }, LOCAL)).toContain(
      'answers Host localhost, 127.0.0.1 or [::1] only',
    );
    // The rebinding page's Origin matches its Host: the Host check is what refuses it.
    expect(
      refusedCaller({ host: 'evil.example:4465', origin: 'http://evil.example:4465' }, LOCAL),
    ).toBeDefined();
    expect(refusedCaller({ host: undefined, origin: undefined }, LOCAL)).toBeDefined();
    expect(refusedCaller({ host: 'drey.example', origin: undefined }, PUBLIC)).toBeUndefined();
  });

  it("takes the service's own origin, port included", () => {
    expect(
      refusedCaller({ host: '127.0.0.1:4465', origin: 'http://127.0.0.1:4465' }, LOCAL),
    ).toBeUndefined();
    expect(
      refusedCaller({ host: 'drey.example', origin: 'https://drey.example' }, PUBLIC),
    ).toBeUndefined();
    expect(
      refusedCaller({ host: '127.0.0.1:4465', origin: 'http://127.0.0.1:9999' }, LOCAL),
    ).toContain('may not call the MCP server');
  });

  it('takes a configured CORS origin, or any with *', () => {
    const app = { bindHost: '0.0.0.0', corsOrigins: ['https://app.example'] };
    expect(
      refusedCaller({ host: 'drey.example', origin: 'https://app.example' }, app),
    ).toBeUndefined();
    expect(
      refusedCaller({ host: 'drey.example', origin: 'https://evil.example' }, app),
    ).toBeDefined();
    const any = { bindHost: '0.0.0.0', corsOrigins: ['*'] };
    expect(
      refusedCaller({ host: 'drey.example', origin: 'https://evil.example' }, any),
    ).toBeUndefined();
  });

  it('refuses what is not an http origin, or not an origin at all', () => {
    for (const origin of ['null', 'file://drey.example', 'http://drey.example/path']) {
      expect(refusedCaller({ host: 'drey.example', origin }, PUBLIC)).toBeDefined();
    }
  });
});
