import { inflateSync } from 'node:zlib';

/** Just enough of PNG to check what the renderer sends: 8-bit RGB or RGBA, not interlaced. */

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface PngHeader {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  interlace: number;
}

/** The IHDR chunk, after checking the signature; throws on anything that is not a PNG. */
export function pngHeader(png: Buffer): PngHeader {
  if (png.length < 33 || !png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  if (png.toString('latin1', 12, 16) !== 'IHDR') throw new Error('the first chunk is not IHDR');
  return {
    width: png.readUInt32BE(16),
    height: png.readUInt32BE(20),
    bitDepth: png[24],
    colorType: png[25],
    interlace: png[28],
  };
}

export interface Image {
  width: number;
  height: number;
  channels: number;
  pixels: Buffer;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

export function decodePng(png: Buffer): Image {
  const header = pngHeader(png);
  const channels = header.colorType === 2 ? 3 : header.colorType === 6 ? 4 : 0;
  if (header.bitDepth !== 8 || channels === 0 || header.interlace !== 0) {
    throw new Error(`unsupported PNG: ${JSON.stringify(header)}`);
  }
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type === 'IDAT') idat.push(png.subarray(at + 8, at + 8 + length));
    if (type === 'IEND') break;
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = header.width * channels;
  const pixels = Buffer.alloc(stride * header.height);
  for (let y = 0; y < header.height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[row + x - channels] : 0;
      const b = y > 0 ? pixels[row - stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[row - stride + x - channels] : 0;
      const predictor =
        filter === 1
          ? a
          : filter === 2
            ? b
            : filter === 3
              ? (a + b) >> 1
              : filter === 4
                ? paeth(a, b, c)
                : 0;
      pixels[row + x] = (line[x] + predictor) & 0xff;
    }
  }
  return { width: header.width, height: header.height, channels, pixels };
}

/**
 * An average hash: the image in a grid of `size` × `size` cells, one bit per cell (darker than the mean).
 * Two renderings that look alike have hashes a few bits apart; different charts, many.
 */
export function averageHash(image: Image, size = 16): boolean[] {
  const cells: number[] = [];
  for (let cy = 0; cy < size; cy++) {
    for (let cx = 0; cx < size; cx++) {
      const x0 = Math.floor((cx * image.width) / size);
      const x1 = Math.floor(((cx + 1) * image.width) / size);
      const y0 = Math.floor((cy * image.height) / size);
      const y1 = Math.floor(((cy + 1) * image.height) / size);
      let sum = 0;
      let count = 0;
      for (let y = y0; y < y1; y += 2) {
        for (let x = x0; x < x1; x += 2) {
          const at = (y * image.width + x) * image.channels;
          sum +=
            0.299 * image.pixels[at] + 0.587 * image.pixels[at + 1] + 0.114 * image.pixels[at + 2];
          count++;
        }
      }
      cells.push(count ? sum / count : 0);
    }
  }
  const mean = cells.reduce((a, b) => a + b, 0) / cells.length;
  return cells.map((value) => value < mean);
}

export function hashDistance(a: boolean[], b: boolean[]): number {
  return a.filter((bit, i) => bit !== b[i]).length;
}
