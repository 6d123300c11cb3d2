import { SECURITY_HEADERS, pagePolicy, policyText } from '@/http/security-headers';

describe('security headers', () => {
  it("are helmet's, once, with the API's policy first", () => {
    expect(SECURITY_HEADERS[0]).toEqual([
      'Content-Security-Policy',
      "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'",
    ]);
    const names = SECURITY_HEADERS.map(([name]) => name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining(['Strict-Transport-Security', 'X-Content-Type-Options']),
    );
    expect(Object.fromEntries(SECURITY_HEADERS)['X-Frame-Options']).toBe('DENY');
  });

  it('write a page policy that refuses frames, and the same without it for a <meta>', () => {
    const directives = { defaultSrc: ["'none'"], imgSrc: ['data:'] };
    expect(policyText(directives)).toBe("default-src 'none';img-src data:");
    expect(pagePolicy(directives)).toBe("default-src 'none';img-src data:;frame-ancestors 'none'");
  });

  it('refuse a policy helmet finds wrong, at start-up rather than in a browser', () => {
    expect(() => policyText({ defaultSrc: ['self'] })).toThrow(/should be quoted/);
    expect(() => policyText({ scriptSrc: ["'self'"] })).toThrow(/needs a default-src/);
  });
});
