import { ByteLru } from '@/cache/byte-lru';

describe('ByteLru', () => {
  it('evicts the least recently used entries past its byte budget', () => {
    const lru = new ByteLru<string>(100);
    lru.set('a', 'A', 40);
    lru.set('b', 'B', 40);
    expect(lru.get('a')).toBe('A');
    lru.set('c', 'C', 40);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe('A');
    expect(lru.get('c')).toBe('C');
    expect(lru.bytes).toBe(80);
  });

  it('does not keep a value bigger than the whole budget, nor a second copy of a key', () => {
    const lru = new ByteLru<string>(100);
    lru.set('a', 'A', 30);
    lru.set('big', 'B', 101);
    expect(lru.get('big')).toBeUndefined();
    expect(lru.get('a')).toBe('A');
    lru.set('a', 'A2', 50);
    expect(lru.get('a')).toBe('A2');
    expect(lru.bytes).toBe(50);
    expect(lru.size).toBe(1);
  });

  it('keeps nothing with a budget of 0', () => {
    const lru = new ByteLru<string>(0);
    lru.set('a', 'A', 1);
    expect(lru.size).toBe(0);
  });
});
