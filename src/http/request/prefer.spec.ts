import { prefersAsync } from '@/http/request/prefer';

describe('prefersAsync (RFC 7240 Prefer)', () => {
  it.each([
    'respond-async',
    'Respond-Async',
    ' respond-async ',
    'respond-async, wait=10',
    'wait=10, respond-async',
    'return=minimal; foo="a,b", respond-async',
    'respond-async; x=1',
  ])('reads %j as asking for an answer at once', (header) => {
    expect(prefersAsync(header)).toBe(true);
  });

  it.each([
    undefined,
    '',
    'wait=10',
    'return=minimal',
    'x="respond-async"',
    'foo; respond-async',
    'respond-asynchronously',
  ])('reads %j as not asking for it', (header) => {
    expect(prefersAsync(header)).toBe(false);
  });

  it('reads the header sent several times', () => {
    expect(prefersAsync(['wait=5', 'respond-async'])).toBe(true);
    expect(prefersAsync(['wait=5', 'return=minimal'])).toBe(false);
  });
});
