import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipParts } from '@/engine/export/zip-writer';

async function bytesOf(parts: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of parts) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Every entry of a zip as Python's zipfile reads it, after `testzip` has checked each CRC-32. */
function unzipped(bytes: Buffer): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'drey-zip-'));
  try {
    const file = join(dir, 'f.zip');
    writeFileSync(file, bytes);
    const script = [
      'import json, sys, zipfile',
      'z = zipfile.ZipFile(sys.argv[1])',
      'assert z.testzip() is None',
      'print(json.dumps({i.filename: z.read(i).decode("utf-8") for i in z.infolist()}))',
    ].join('\n');
    return JSON.parse(
      execFileSync('/usr/bin/python3', ['-c', script, file], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      }),
    ) as Record<string, string>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('zipParts', () => {
  it('writes small parts and a streamed part that an independent reader opens, CRCs checked', async () => {
    const lines = Array.from({ length: 20_000 }, (_, index) => `<row>${index} é 😀</row>\n`);
    async function* rows(): AsyncGenerator<Buffer> {
      for (let at = 0; at < lines.length; at += 1000) {
        // As a file is read: each chunk after a turn of the event loop.
        await tick();
        yield Buffer.from(lines.slice(at, at + 1000).join(''), 'utf8');
      }
    }
    const zip = await bytesOf(
      zipParts([
        { name: 'a.xml', text: '<a>ü</a>' },
        { name: 'dir/sheet.xml', stream: rows() },
        { name: 'z.xml', text: '' },
      ]),
    );
    expect(unzipped(zip)).toEqual({
      'a.xml': '<a>ü</a>',
      'dir/sheet.xml': lines.join(''),
      'z.xml': '',
    });
  });

  it('reads the streamed part only as fast as the zip is read, and stops it when the reader goes', async () => {
    let produced = 0;
    let stopped = false;
    async function* endless(): AsyncGenerator<Buffer> {
      try {
        for (;;) {
          await tick();
          // Random bytes: deflate cannot shrink them, so its output grows as its input does.
          const chunk = randomBytes(64 * 1024);
          produced += chunk.length;
          yield chunk;
        }
      } finally {
        stopped = true;
      }
    }
    const zip = zipParts([{ name: 'big.bin', stream: endless() }]);
    let taken = 0;
    for await (const chunk of zip) {
      taken += chunk.length;
      if (taken > 4 * 1024 * 1024) break;
    }
    // What the reader took, plus the buffers between the source and the zip's output: a few MB, not all.
    expect(produced).toBeGreaterThan(4 * 1024 * 1024);
    expect(produced).toBeLessThan(taken + 4 * 1024 * 1024);
    await tick();
    expect(stopped).toBe(true);
  });

  it('fails with the streamed part’s error', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('<row/>');
      await tick();
      throw new Error('the COPY failed');
    }
    await expect(bytesOf(zipParts([{ name: 's.xml', stream: failing() }]))).rejects.toThrow(
      'the COPY failed',
    );
  });
});
