import { isMcpResourcePath } from '@/oauth/mcp-resource';

describe('isMcpResourcePath', () => {
  const issuer = 'http://127.0.0.1:4465';

  it('takes the MCP endpoint’s paths on the issuer’s origin, nothing else', () => {
    expect(isMcpResourcePath(issuer, 'http://127.0.0.1:4465/mcp')).toBe(true);
    expect(isMcpResourcePath(issuer, 'http://127.0.0.1:4465/api/service-v0/project/p/v1/mcp')).toBe(
      true,
    );
    for (const other of [
      'http://127.0.0.1:4465/api/service-v0/project/p/v1/datasets',
      'http://127.0.0.1:4465/mcp?x=1',
      'http://127.0.0.1:4465/mcp#f',
      'http://user@127.0.0.1:4465/mcp',
      'http://127.0.0.1:4466/mcp',
      'https://127.0.0.1:4465/mcp',
      'https://elsewhere.example/mcp',
      'not a url',
    ]) {
      expect({ other, ok: isMcpResourcePath(issuer, other) }).toEqual({ other, ok: false });
    }
  });

  it('counts every loopback name of the same scheme and port as the issuer’s, when told to', () => {
    expect(isMcpResourcePath(issuer, 'http://localhost:4465/mcp')).toBe(false);
    expect(isMcpResourcePath(issuer, 'http://localhost:4465/mcp', true)).toBe(true);
    expect(isMcpResourcePath(issuer, 'http://[::1]:4465/mcp', true)).toBe(true);
    expect(isMcpResourcePath(issuer, 'http://localhost:4466/mcp', true)).toBe(false);
    expect(isMcpResourcePath(issuer, 'http://drey.example:4465/mcp', true)).toBe(false);
    expect(isMcpResourcePath('https://drey.example', 'https://localhost/mcp', true)).toBe(false);
  });
});
