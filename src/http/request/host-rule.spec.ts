import { hostRefusal, hostRuleOf } from '@/http/request/host-rule';

describe('the Host rule', () => {
  const local = hostRuleOf('127.0.0.1', []);

  it('answers the loopback names with any port, or none, in any case', () => {
    for (const host of [
      'localhost',
      'localhost:4465',
      'LocalHost:1',
      '127.0.0.1',
      '127.0.0.1:54321',
      '[::1]',
      '[::1]:4465',
    ]) {
      expect([host, hostRefusal(local, host)]).toEqual([host, undefined]);
    }
  });

  it('refuses any other name (a rebinding page), a missing Host, and what only a URL parser reads as loopback', () => {
    for (const host of [
      'evil.example',
      'evil.example:4465',
      '127.0.0.1.nip.io:4465',
      'localhost.',
      'localhost.evil.example',
      '127.0.0.2:4465',
      // User info, a path, a second port, spaces: a URL parser would find 127.0.0.1 or localhost in them.
      'evil.example@127.0.0.1:4465',
      'localhost/evil',
      'localhost:4465:80',
      'localhost :4465',
      '[::1]evil',
      '::1',
      '',
      undefined,
    ]) {
      expect([host, hostRefusal(local, host)]).toEqual([
        host,
        'This service answers the Host names localhost, 127.0.0.1, [::1] only (it is bound to a loopback address; ALLOWED_HOSTS adds names)',
      ]);
    }
  });

  it('adds the bound address and ALLOWED_HOSTS names', () => {
    const rule = hostRuleOf('127.0.0.2', ['drey.internal', '[fe80::1]']);
    for (const host of ['127.0.0.2:4465', 'drey.internal', 'DREY.internal:8080', '[fe80::1]:80']) {
      expect([host, hostRefusal(rule, host)]).toEqual([host, undefined]);
    }
    // The refusal names the loopback names and the bound address, never ALLOWED_HOSTS' (a rebinding page
    // reads it).
    const refusal = hostRefusal(rule, 'other.internal');
    expect(refusal).toContain('Host names localhost, 127.0.0.1, [::1], 127.0.0.2 only');
    expect(refusal).not.toContain('drey.internal');
    expect(hostRefusal(hostRuleOf('::1', []), '[::1]:4465')).toBeUndefined();
    expect(hostRefusal(hostRuleOf('localhost', []), 'localhost:4465')).toBeUndefined();
  });

  it('is off for a service bound to anything but loopback (a proxy in front checks names)', () => {
    for (const bind of ['0.0.0.0', '::', '10.0.0.7', 'drey.internal']) {
      expect(hostRuleOf(bind, [])).toBeUndefined();
      expect(hostRefusal(hostRuleOf(bind, []), 'evil.example')).toBeUndefined();
    }
  });
});
