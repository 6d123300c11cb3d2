import { basicClientCredentials, isBasicAuthorization } from '@/auth/client-credentials';

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('client credentials in a Basic Authorization header', () => {
  it('recognises the Basic scheme in any case, and nothing else', () => {
    expect(isBasicAuthorization('Basic Og==')).toBe(true);
    expect(isBasicAuthorization('basic   Og==  ')).toBe(true);
    expect(isBasicAuthorization('Basic')).toBe(true);
    expect(isBasicAuthorization('Bearer abc')).toBe(false);
    expect(isBasicAuthorization('Basically abc')).toBe(false);
    expect(isBasicAuthorization(undefined)).toBe(false);
  });

  it("takes Swagger UI's empty credentials as none", () => {
    expect(basicClientCredentials('Basic Og==')).toBeUndefined();
  });

  it('decodes form-encoded id and secret (RFC 6749 2.3.1)', () => {
    expect(basicClientCredentials(basic('my%20app:s%3Acret+x'))).toEqual({
      clientId: 'my app',
      clientSecret: 's:cret x',
    });
    expect(basicClientCredentials(basic('studio:'))).toEqual({
      clientId: 'studio',
      clientSecret: '',
    });
  });

  it('refuses a header that is not base64 of id:secret', () => {
    expect(() => basicClientCredentials('Basic')).toThrow('client_id:client_secret');
    expect(isBasicAuthorization('Basic a b')).toBe(true);
    expect(() => basicClientCredentials('Basic a b')).toThrow('client_id:client_secret');
    expect(() => basicClientCredentials(basic('no-colon'))).toThrow('client_id:client_secret');
    expect(() => basicClientCredentials('Basic %%%')).toThrow('client_id:client_secret');
    expect(() => basicClientCredentials(basic('a%zz:b'))).toThrow('form-encoded');
  });
});
