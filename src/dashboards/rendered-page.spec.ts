import { RENDERED_PAGE_CODEC, etagOfBody } from '@/dashboards/rendered-page';

describe('RENDERED_PAGE_CODEC', () => {
  // Every byte value, as a PNG holds them: a text encoding that dropped or mapped one would show here.
  const body = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31) % 256));
  const page = { contentType: 'image/png', body, etag: etagOfBody(body) };

  it('carries binary bodies through the shared store’s strings unchanged', () => {
    const text = RENDERED_PAGE_CODEC.encode(page);
    expect(typeof text).toBe('string');
    const back = RENDERED_PAGE_CODEC.decode(text);
    expect(back.contentType).toBe('image/png');
    expect(back.etag).toBe(page.etag);
    expect(Buffer.compare(back.body, body)).toBe(0);
  });

  it('counts at least the body’s bytes toward the memory bound, and its base64 toward the entry bound', () => {
    expect(RENDERED_PAGE_CODEC.bytes(page)).toBeGreaterThanOrEqual(body.length);
    // TieredCache compares the encoded length with RESULT_CACHE_MAX_ENTRY_MB: base64 is a third larger.
    expect(RENDERED_PAGE_CODEC.encode(page).length).toBeGreaterThan((body.length * 4) / 3);
  });

  it('shares no error: a process waiting for a failed render renders itself', () => {
    expect(RENDERED_PAGE_CODEC.encodeError(new Error('template line 3'))).toBeUndefined();
  });

  it('the ETag is the body’s: another body, another ETag', () => {
    expect(etagOfBody(body)).toMatch(/^"[\w-]{27}"$/);
    expect(etagOfBody(Buffer.from('other'))).not.toBe(page.etag);
  });
});
