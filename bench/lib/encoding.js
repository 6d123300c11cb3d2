// @ts-check
'use strict';
// The floors' reading of Accept-Encoding. Kept this small on purpose: the floors answer only the bench's
// own requests (`gzip, br` or nothing), and a negotiating library would add work the floor must not have.

/**
 * Whether an Accept-Encoding header names `encoding` with a quality above zero.
 * @param {string | undefined} header
 * @param {string} encoding
 */
function accepts(header, encoding) {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [name, ...params] = part.trim().split(';');
    if (name.trim().toLowerCase() !== encoding) return false;
    const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)?.[1]).find(Boolean);
    return q === undefined || Number(q) > 0;
  });
}

module.exports = { accepts };
