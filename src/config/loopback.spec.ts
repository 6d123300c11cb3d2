import { isLoopbackHost, localOrigin } from '@/config/loopback';

describe('loopback', () => {
  it('tells a loopback HOST from any other', () => {
    expect(
      ['localhost', '127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'].map(isLoopbackHost),
    ).toEqual([true, true, true, true, true]);
    expect(['0.0.0.0', '::', '10.0.0.5', 'example.com'].map(isLoopbackHost)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('reaches a server listening on every address at the loopback address, any other at its own', () => {
    expect(localOrigin({ address: '0.0.0.0', port: 4465 })).toBe('http://127.0.0.1:4465');
    expect(localOrigin({ address: '::', port: 4465 })).toBe('http://[::1]:4465');
    expect(localOrigin({ address: '127.0.0.1', port: 80 })).toBe('http://127.0.0.1:80');
    expect(localOrigin({ address: '10.0.0.5', port: 8080 })).toBe('http://10.0.0.5:8080');
    expect(localOrigin({ address: '::1', port: 4465 })).toBe('http://[::1]:4465');
  });
});
