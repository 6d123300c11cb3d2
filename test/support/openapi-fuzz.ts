import * as fc from 'fast-check';
import { Agent, IncomingHttpHeaders, request as httpRequest } from 'node:http';

/**
 * A schema-driven fuzzer of the service's own OpenAPI document (test/fuzz.e2e-spec.ts): requests are
 * generated from each operation's path and query parameters and body schemas, valid and not (wrong types,
 * missing and extra fields, bounds, odd encodings and content types, every kind of token), and each answer is
 * checked against what the document lists for the operation.
 */

// The document is JSON read from the server: its schemas are checked field by field here.

export type Schema = Record<string, any>;
export interface OpenApiDoc {
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, Schema> };
}

/** `mcp`: the MCP endpoint, whose errors past the application's own checks are JSON-RPC's (docs/mcp.md). */
export type Layout = 'current' | 'legacy' | 'mcp';

export interface Operation {
  /** `GET /api/...`: the method and the path template of the document. */
  id: string;
  method: string;
  template: string;
  layout: Layout;
  pathParams: Schema[];
  queryParams: Schema[];
  /** Media type to schema, when the operation takes a body. */
  body?: Record<string, Schema>;
  statuses: Set<number>;
  responses: Record<string, any>;
  anonymous: boolean;
}

export const TOKEN_KINDS = [
  'none',
  'admin',
  'user',
  'malformed',
  'expired',
  'revoked',
  'wrong-key',
  'empty-bearer',
  'basic',
] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export interface FuzzRequest {
  method: string;
  /** The raw request target: path and query as sent, percent-escapes included. */
  target: string;
  token: TokenKind;
  headers: Record<string, string>;
  body?: Buffer;
  /** What kind of body was generated (for the counterexample). */
  bodyKind?: string;
  /** What in the request breaks the document's rules, if anything: then a 2xx is a failure. */
  invalid?: string;
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** What the fuzzer knows of the server it talks to. */
export interface FuzzContext {
  doc: OpenApiDoc;
  tokens: Record<TokenKind, string | undefined>;
  /** Known good values of path parameters by name (`dataset`, `name`, `username`...). */
  pathValues: Record<string, string[]>;
  /** Strings that must not appear in an answer (file paths, model SQL). */
  secrets: string[];
}

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

export function layoutOf(path: string): Layout {
  if (/^(\/api\/service-v0\/project\/[^/]+\/[^/]+)?\/mcp$/.test(path)) return 'mcp';
  return path.startsWith('/service-v0') ? 'legacy' : 'current';
}

export function deref(schema: Schema | undefined, doc: OpenApiDoc): Schema {
  let current = schema ?? {};
  for (let i = 0; i < 20 && typeof current.$ref === 'string'; i++) {
    const name = current.$ref.replace('#/components/schemas/', '');
    current = doc.components.schemas[name] ?? {};
  }
  return current;
}

/** Every operation of the document. */
export function operationsOf(doc: OpenApiDoc): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = [
        ...((item.parameters as Schema[]) ?? []),
        ...((op.parameters as Schema[]) ?? []),
      ];
      const content = (op.requestBody as Schema | undefined)?.content as
        Record<string, Schema> | undefined;
      operations.push({
        id: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        layout: layoutOf(template),
        pathParams: params.filter((param) => param.in === 'path'),
        queryParams: params.filter((param) => param.in === 'query'),
        body: content
          ? Object.fromEntries(
              Object.entries(content).map(([type, media]) => [
                type,
                (media.schema as Schema) ?? {},
              ]),
            )
          : undefined,
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number)),
        responses: (op.responses as Record<string, any>) ?? {},
        anonymous:
          op.security === undefined ||
          (op.security as Schema[]).some((requirement) => Object.keys(requirement).length === 0),
      });
    }
  }
  return operations;
}

// ---------------------------------------------------------------------------------------------------------
// Values from schemas

/** A long string within the body limit; query strings get a shorter one (Node's header limit is 16 KB). */
const LONG = 'x'.repeat(64 * 1024);
const LONG_IN_QUERY = 'x'.repeat(4000);
const ODD_STRINGS = ['', ' ', 'a\u0000b', '\ud800', 'a\udc00', '💥', '../../etc/passwd', "'; --"];

/** Values of a schema, mostly valid, with its boundaries. */
export function valueOf(
  schema: Schema | undefined,
  doc: OpenApiDoc,
  depth = 0,
): fc.Arbitrary<unknown> {
  const s = deref(schema, doc);
  const nullable = s.nullable === true ? [fc.constant(null)] : [];
  if (Array.isArray(s.enum))
    return fc.oneof(fc.constantFrom(...(s.enum as unknown[])), ...nullable);
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) {
      return fc.oneof(...(s[key] as Schema[]).map((item) => valueOf(item, doc, depth + 1)));
    }
  }
  if (Array.isArray(s.allOf)) {
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    for (const part of s.allOf as Schema[]) {
      const resolved = deref(part, doc);
      Object.assign(merged.properties as Schema, resolved.properties ?? {});
      (merged.required as string[]).push(...((resolved.required as string[]) ?? []));
    }
    return valueOf(merged, doc, depth + 1);
  }
  switch (s.type) {
    case 'string': {
      if (s.format === 'date') {
        return fc.oneof(
          fc
            .date({ min: new Date('2000-01-01'), max: new Date('2030-12-31'), noInvalidDate: true })
            .map((date) => date.toISOString().slice(0, 10)),
          fc.constantFrom('2024-02-30', '1-1-1', ''),
        );
      }
      const min = (s.minLength as number | undefined) ?? 0;
      const max = (s.maxLength as number | undefined) ?? 24;
      const bounds = [min, max, max + 1].filter((n) => n >= 0 && n < 70000);
      return fc.oneof(
        { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, 24) }) },
        { weight: 1, arbitrary: fc.constantFrom(...bounds).map((n) => 'a'.repeat(n)) },
        ...nullable,
      );
    }
    case 'integer':
    case 'number': {
      const min = (s.minimum as number | undefined) ?? -5;
      const max = (s.maximum as number | undefined) ?? 100_000;
      return fc.oneof(
        {
          weight: 4,
          arbitrary: fc.integer({ min, max: Math.max(min, Math.min(max, 2 ** 31 - 1)) }),
        },
        { weight: 1, arbitrary: fc.constantFrom(min, min - 1, max, max + 1, 0, -1) },
        ...(s.type === 'number' ? [fc.double({ noNaN: true, noDefaultInfinity: true })] : []),
        ...nullable,
      );
    }
    case 'boolean':
      return fc.oneof(fc.boolean(), ...nullable);
    case 'array': {
      const min = (s.minItems as number | undefined) ?? 0;
      const max = (s.maxItems as number | undefined) ?? 4;
      return fc.oneof(
        fc.array(valueOf(s.items as Schema, doc, depth + 1), { minLength: min, maxLength: max }),
        ...nullable,
      );
    }
    default:
      if (s.type === 'object' || s.properties) return objectOf(s, doc, depth);
      return anyJson(depth);
  }
}

/** Values that reach past the first checks (a valid SQL query, a user that exists), by property name. */
export const KNOWN_VALUES: Record<string, unknown[]> = {};

/** A property's values: its schema's, and sometimes a known good one. */
export function propertyOf(
  name: string,
  schema: Schema,
  doc: OpenApiDoc,
  depth = 0,
): fc.Arbitrary<unknown> {
  const known = KNOWN_VALUES[name];
  const generated = valueOf(schema, doc, depth);
  return known ? fc.oneof(fc.constantFrom(...known), generated) : generated;
}

function objectOf(s: Schema, doc: OpenApiDoc, depth: number): fc.Arbitrary<unknown> {
  const properties = (s.properties as Record<string, Schema>) ?? {};
  const required = new Set<string>((s.required as string[]) ?? []);
  if (depth > 4) return fc.constant({});
  const record = fc.record(
    Object.fromEntries(
      Object.entries(properties).map(([key, value]) => [
        key,
        propertyOf(key, value, doc, depth + 1),
      ]),
    ),
    { requiredKeys: [...required].filter((key) => key in properties) },
  );
  if (s.additionalProperties === false || Object.keys(properties).length > 0) return record;
  return fc.dictionary(fc.string({ maxLength: 12 }), anyJson(depth + 1), { maxKeys: 4 });
}

function anyJson(depth: number): fc.Arbitrary<unknown> {
  return depth > 3
    ? fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null))
    : fc.jsonValue({ maxDepth: 2 });
}

/** A value of another type than the schema's, or outside its enum and bounds. */
export function wrongValueOf(
  schema: Schema | undefined,
  doc: OpenApiDoc,
  long = LONG,
): fc.Arbitrary<unknown> {
  const s = deref(schema, doc);
  const others: unknown[] = [null, true, 12, -1, 1.5, 'text', '', [], ['a'], {}, { a: 1 }];
  const wrong = others.filter((value) => {
    if (value === null) return s.nullable !== true;
    if (Array.isArray(value)) return s.type !== 'array';
    if (typeof value === 'string') return s.type !== 'string' || Array.isArray(s.enum);
    if (typeof value === 'number') return s.type !== 'number' && s.type !== 'integer';
    if (typeof value === 'boolean') return s.type !== 'boolean';
    return s.type !== 'object';
  });
  return fc.constantFrom(...(wrong.length > 0 ? wrong : others), ...ODD_STRINGS, long);
}

// ---------------------------------------------------------------------------------------------------------
// Requests

const ODD_ESCAPES = [
  '%00',
  '%',
  '%ZZ',
  '%FF',
  '%C3',
  '%ED%A0%80',
  '%u0041',
  '%2e%2e',
  '%2F',
  '%0A',
];
const ODD_SEGMENTS = ['..', 'x'.repeat(300), '%00', '%FF', '%', 'a%2Fb', '%E2%80%AE', '🙂'];

/** The percent-encoded form of a string, its lone surrogates as the escapes of U+FFFD-less bytes. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    // A lone surrogate: encodeURIComponent refuses it; send the (invalid) CESU bytes instead.
    return '%ED%A0%80';
  }
}

function pathArb(op: Operation, ctx: FuzzContext): fc.Arbitrary<string> {
  const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
  if (names.length === 0) return fc.constant(op.template);
  const segment = (name: string): fc.Arbitrary<string> => {
    const known = ctx.pathValues[name] ?? [];
    return fc.oneof(
      ...(known.length > 0
        ? [{ weight: 16, arbitrary: fc.constantFrom(...known).map(encode) }]
        : []),
      { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 16 }).map(encode) },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(...ODD_SEGMENTS)
          .map((value) => (/^[\w%.-]*$/.test(value) ? value : encode(value))),
      },
    );
  };
  return fc.tuple(...names.map(segment)).map((values) => {
    let path = op.template;
    names.forEach((name, i) => (path = path.replace(`{${name}}`, values[i])));
    return path;
  });
}

/** Query text of one value: arrays are repeated keys, objects JSON. */
function queryTexts(value: unknown): string[] {
  if (Array.isArray(value))
    return value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
  if (value === null || value === undefined) return [''];
  return [typeof value === 'string' ? value : JSON.stringify(value)];
}

/** Whether a query text breaks a parameter's schema (as the server must read it), and how. */
export function queryTextProblem(
  texts: string[],
  schema: Schema,
  doc: OpenApiDoc,
  allowEmpty = false,
): string | undefined {
  const s = deref(schema, doc);
  // A parameter disabled for other selections ignores any value (decisions.md): the document says which.
  if (s['x-disabled-unless'] !== undefined) return undefined;
  if (allowEmpty && texts.length === 1 && texts[0] === '') return undefined;
  if (s.type !== 'array' && texts.length > 1) return undefined; // repeated: the server decides
  const items = s.type === 'array' ? deref(s.items as Schema, doc) : s;
  if (s.type === 'array') {
    if (s.minItems !== undefined && texts.length < (s.minItems as number))
      return `fewer than ${s.minItems} values`;
    if (s.maxItems !== undefined && texts.length > (s.maxItems as number))
      return `more than ${s.maxItems} values`;
  }
  for (const text of texts) {
    if (Array.isArray(items.enum) && !(items.enum as unknown[]).map(String).includes(text))
      return `${JSON.stringify(text)} not in enum`;
    if (items.type === 'integer' && !/^\d+$/.test(text))
      return `${JSON.stringify(text.slice(0, 20))} is not an integer`;
    if (items.type === 'number' && !(text.trim() !== '' && Number.isFinite(Number(text))))
      return `${JSON.stringify(text.slice(0, 20))} is not a number`;
    if (items.type === 'boolean' && !/^(true|false|1|0)$/i.test(text))
      return `${JSON.stringify(text.slice(0, 20))} is not a boolean`;
    if ((items.type === 'integer' || items.type === 'number') && /^-?[\d.]+$/.test(text)) {
      const value = Number(text);
      if (items.minimum !== undefined && value < (items.minimum as number))
        return `${text} below ${items.minimum}`;
      if (items.maximum !== undefined && value > (items.maximum as number))
        return `${text} above ${items.maximum}`;
    }
    if (
      items.type === 'string' &&
      items.maxLength !== undefined &&
      [...text].length > (items.maxLength as number)
    )
      return `longer than ${items.maxLength}`;
    if (
      items.type === 'string' &&
      items.minLength !== undefined &&
      [...text].length < (items.minLength as number)
    )
      return `shorter than ${items.minLength}`;
  }
  return undefined;
}

interface QueryPart {
  pairs: string[];
  invalid?: string;
}

function queryArb(op: Operation, ctx: FuzzContext): fc.Arbitrary<QueryPart> {
  const byName = new Map(op.queryParams.map((param) => [param.name as string, param]));
  const documented = op.queryParams.map((param) => {
    const name = param.name as string;
    const schema = param.schema as Schema;
    return fc
      .oneof(
        { weight: 5, arbitrary: propertyOf(name, schema, ctx.doc) },
        { weight: 2, arbitrary: wrongValueOf(schema, ctx.doc, LONG_IN_QUERY) },
      )
      .map((value): QueryPart => {
        const texts = queryTexts(value);
        const problem = queryTextProblem(texts, schema, ctx.doc, param.allowEmptyValue === true);
        return {
          pairs: texts.map((text) => `${encode(name)}=${encode(text)}`),
          invalid: problem && `query ${name}: ${problem}`,
        };
      });
  });
  /** A fixed query part, invalid when it breaks a documented parameter (or always, `always`). */
  const fixed = (pairs: string[], always?: string): QueryPart => {
    if (always) return { pairs, invalid: always };
    for (const pair of pairs) {
      const [name, value = ''] = pair.split('=');
      const param = byName.get(name);
      const problem =
        param &&
        queryTextProblem(
          [decodeURIComponent(value)],
          param.schema as Schema,
          ctx.doc,
          param.allowEmptyValue === true,
        );
      if (problem) return { pairs, invalid: `query ${name}: ${problem}` };
    }
    return { pairs };
  };
  const extra = fc.oneof(
    fc
      .tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 }))
      .map(([k, v]) => ({ pairs: [`${encode(`u_${k}`)}=${encode(v)}`] })),
    fc
      .tuple(fc.constantFrom(...ODD_ESCAPES), fc.constantFrom(...ODD_ESCAPES))
      .map(([k, v]) =>
        fixed([`a${k}=${v}`, `x=${v}`], [k, v].includes('%00') ? 'a NUL in the query' : undefined),
      ),
    fc
      .constantFrom<string[]>(
        ['x_limit=1', 'x_limit=2'],
        ['x_select=', 'x_select=%00'],
        ['a[b]=1', 'a[c]=2'],
        ['x_parent_param=not_a_parameter'],
        ['x_verify_params=true', 'unknown_name=1'],
        ['x_orientation=sideways'],
        ['x_limit=-1'],
        ['x_offset=99999999999999999999'],
        ['=', '&&', '=='],
        ['many'],
      )
      .map((pairs) =>
        pairs[0] === 'many'
          ? fixed(
              Array.from({ length: 1001 }, (_, i) => `k${i}=1`),
              'more than 1000 query keys',
            )
          : fixed(pairs, pairs.includes('x_select=%00') ? 'a NUL in the query' : undefined),
      ),
  );
  const parts = fc.tuple(
    ...documented.map((arb) =>
      fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb }),
    ),
    fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: extra }),
  );
  return parts.map((chosen) => {
    const given = chosen.filter((part): part is QueryPart => part !== undefined);
    const pairs = given.flatMap((part) => part.pairs);
    return {
      pairs: pairs.length > 0 ? [`?${pairs.join('&')}`] : [],
      invalid: given.find((part) => part.invalid !== undefined)?.invalid,
    };
  });
}

interface Body {
  kind: string;
  type?: string;
  bytes: Buffer;
  invalid?: string;
}

/** Bodies any server that keeps its rules refuses, whatever the operation. */
const ALWAYS_REFUSED = new Set([
  'json: NUL in a string',
  'json: lone surrogate',
  'json: lone surrogate key',
  'json: truncated',
  'json: deep',
  'form: NUL',
  'form: too many fields',
  'other: text/plain',
  'other: xml',
  'other: json in latin1',
  'other: json in utf-16',
  'other: multipart on json',
]);

/** Why a generated body breaks the operation's document, if it does. */
function judge(
  op: Operation,
  body: Body | undefined,
  ctx: FuzzContext,
  fields?: [string, string][],
): string | undefined {
  if (body === undefined) return undefined;
  const media = body.type?.split(';')[0].trim();
  if (
    ALWAYS_REFUSED.has(body.kind) &&
    !(media && media in (op.body ?? {}) && body.kind.startsWith('other'))
  ) {
    return body.kind;
  }
  if (!op.body) return undefined;
  const schema = media ? op.body[media] : undefined;
  if (!schema) return undefined;
  if (media === 'application/json') {
    // A UTF-8 byte order mark may be ignored (RFC 8259 §8.1), as the JSON parser does.
    const text = body.bytes.toString('utf8').replace(/^\ufeff/, '');
    if (text.trim() === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return 'a body that is not JSON';
    }
    if (value === null) return undefined; // no selections
    // A parameter disabled for other selections ignores any value (decisions.md): the document says which.
    const properties = (deref(schema, ctx.doc).properties as Record<string, Schema>) ?? {};
    if (typeof value === 'object' && !Array.isArray(value)) {
      value = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).filter(
          ([key]) => properties[key]?.['x-disabled-unless'] === undefined,
        ),
      );
    }
    const problems = validate(value, schema, ctx.doc);
    return problems.length > 0 ? `body: ${problems[0]}` : undefined;
  }
  if (fields) {
    const s = deref(schema, ctx.doc);
    const properties = (s.properties as Record<string, Schema>) ?? {};
    const given = new Map<string, string[]>();
    for (const [key, value] of fields) given.set(key, [...(given.get(key) ?? []), value]);
    for (const key of (s.required as string[]) ?? [])
      if (!given.has(key)) return `form: ${key} is missing`;
    for (const [key, values] of given) {
      if (!(key in properties)) {
        if (s.additionalProperties === false) return `form: ${key} is not allowed`;
        continue;
      }
      const problem = queryTextProblem(values, properties[key], ctx.doc);
      if (problem) return `form ${key}: ${problem}`;
    }
  }
  return undefined;
}

const BOUNDARY = 'fuzzboundary';

function multipart(fields: [string, string | Buffer][]): Buffer {
  return Buffer.concat([
    ...fields.map(([name, value]) =>
      Buffer.concat([
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`),
        Buffer.isBuffer(value) ? value : Buffer.from(value),
        Buffer.from('\r\n'),
      ]),
    ),
    Buffer.from(`--${BOUNDARY}--\r\n`),
  ]);
}

function formText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** Bodies of an operation: per its media types' schemas, broken ones, and bodies of other types. */
function bodyArb(op: Operation, ctx: FuzzContext): fc.Arbitrary<Body | undefined> {
  const json = op.body?.['application/json'];
  const form = op.body?.['application/x-www-form-urlencoded'] ?? op.body?.['multipart/form-data'];
  const arbs: fc.WeightedArbitrary<Body | undefined>[] = [
    { weight: 1, arbitrary: fc.constant(undefined) },
  ];
  const jsonBody =
    (kind: string) =>
    (value: unknown): Body => ({
      kind,
      type: 'application/json',
      bytes: Buffer.from(JSON.stringify(value) ?? 'null'),
    });
  if (json) {
    const schema = deref(json, ctx.doc);
    const properties = Object.entries((schema.properties as Record<string, Schema>) ?? {});
    arbs.push({ weight: 6, arbitrary: valueOf(schema, ctx.doc).map(jsonBody('json: per schema')) });
    if (properties.length > 0) {
      arbs.push({
        weight: 4,
        arbitrary: fc
          .tuple(valueOf(schema, ctx.doc), fc.constantFrom(...properties), fc.nat())
          .chain(([value, [key, prop]]) =>
            wrongValueOf(prop, ctx.doc).map((wrong) => ({
              ...(typeof value === 'object' && value !== null ? value : {}),
              [key]: wrong,
            })),
          )
          .map(jsonBody('json: a field of the wrong type')),
      });
      arbs.push({
        weight: 2,
        arbitrary: fc
          .tuple(valueOf(schema, ctx.doc), fc.string({ minLength: 1, maxLength: 10 }), anyJson(2))
          .map(([value, key, extra]) => ({
            ...(typeof value === 'object' && value !== null ? value : {}),
            [`extra_${key}`]: extra,
          }))
          .map(jsonBody('json: an extra field')),
      });
    }
    arbs.push({
      weight: 2,
      arbitrary: fc
        .constantFrom<[string, string | Buffer]>(
          [
            'json: NUL in a string',
            JSON.stringify({ title: 'a\u0000b', username: 'a\u0000', x: 'a\u0000' }),
          ],
          ['json: lone surrogate', '{"title":"\\ud800","username":"\\udc00x","x":"\\ud800"}'],
          ['json: lone surrogate key', '{"\\ud800":1}'],
          [
            'json: non-UTF-8 bytes',
            Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
          ],
          ['json: truncated', '{"a":'],
          ['json: not an object', '[1,2,3]'],
          ['json: a string', '"text"'],
          ['json: null', 'null'],
          ['json: deep', '['.repeat(40) + ']'.repeat(40)],
          ['json: repeated key', '{"title":"a","title":"b","x_limit":1,"x_limit":2}'],
          ['json: long string', JSON.stringify({ title: LONG, sql_query: LONG, username: LONG })],
          ['json: huge number', '{"x_limit":1e400,"expiry_minutes":1e400}'],
          ['json: BOM', '\ufeff{}'],
          ['json: empty', ''],
        )
        .map(([kind, bytes]) => ({ kind, type: 'application/json', bytes: Buffer.from(bytes) })),
    });
  }
  if (form) {
    const schema = deref(form, ctx.doc);
    const fields = fc
      .tuple(
        valueOf(schema, ctx.doc),
        fc.option(fc.constantFrom(...Object.keys(schema.properties ?? { a: 1 }))),
      )
      .chain(([value, wrongKey]) =>
        (wrongKey
          ? wrongValueOf((schema.properties as Record<string, Schema>)[wrongKey], ctx.doc)
          : fc.constant(undefined)
        ).map((wrong) => {
          const entries = Object.entries((value ?? {}) as Record<string, unknown>).map(
            ([key, item]) => [key, formText(item)] as [string, string],
          );
          if (wrongKey) entries.push([wrongKey, formText(wrong)]);
          return entries;
        }),
      );
    arbs.push({
      weight: 6,
      arbitrary: fields.map((entries) => {
        const body: Body = {
          kind: 'form: urlencoded',
          type: 'application/x-www-form-urlencoded',
          bytes: Buffer.from(new URLSearchParams(entries).toString()),
        };
        return { ...body, invalid: judge(op, body, ctx, entries) };
      }),
    });
    arbs.push({
      weight: 3,
      arbitrary: fields.map((entries) => {
        const body: Body = {
          kind: 'form: multipart',
          type: `multipart/form-data; boundary=${BOUNDARY}`,
          bytes: multipart(entries),
        };
        return { ...body, invalid: judge(op, body, ctx, entries) };
      }),
    });
    arbs.push({
      weight: 2,
      arbitrary: fc
        .constantFrom<[string, string, string | Buffer]>(
          [
            'form: repeated keys',
            'application/x-www-form-urlencoded',
            'username=a&username=b&password=x',
          ],
          ['form: invalid escapes', 'application/x-www-form-urlencoded', 'username=%ZZ&password=%'],
          ['form: NUL', 'application/x-www-form-urlencoded', 'username=a%00b&password=x'],
          ['form: non-UTF-8', 'application/x-www-form-urlencoded', 'username=%FF%FE&password=%C3'],
          [
            'form: too many fields',
            'application/x-www-form-urlencoded',
            Array.from({ length: 40 }, (_, i) => `f${i}=1`).join('&'),
          ],
          ['multipart: no boundary', 'multipart/form-data', multipart([['username', 'a']])],
          [
            'multipart: wrong boundary',
            'multipart/form-data; boundary=other',
            multipart([['username', 'a']]),
          ],
          [
            'multipart: truncated',
            `multipart/form-data; boundary=${BOUNDARY}`,
            `--${BOUNDARY}\r\nContent-Disposition: form-data; name="username"\r\n\r\nadm`,
          ],
          [
            'multipart: a file',
            `multipart/form-data; boundary=${BOUNDARY}`,
            `--${BOUNDARY}\r\nContent-Disposition: form-data; name="username"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nadmin\r\n--${BOUNDARY}--\r\n`,
          ],
          [
            'multipart: field too long',
            `multipart/form-data; boundary=${BOUNDARY}`,
            multipart([['password', 'p'.repeat(10000)]]),
          ],
          [
            'multipart: non-UTF-8',
            `multipart/form-data; boundary=${BOUNDARY}`,
            multipart([
              ['username', Buffer.from([0xff, 0xfe])],
              ['password', 'x'],
            ]),
          ],
        )
        .map(([kind, type, bytes]) => ({ kind, type, bytes: Buffer.from(bytes) })),
    });
  }
  if (op.method !== 'GET') {
    // Bodies of a type the operation does not take, or without a type.
    arbs.push({
      weight: 2,
      arbitrary: fc
        .constantFrom<[string, string | undefined, string]>(
          ['other: text/plain', 'text/plain', '{"a":1}'],
          ['other: xml', 'application/xml', '<a/>'],
          ['other: json in latin1', 'application/json; charset=iso-8859-1', '{"a":"\u00e9"}'],
          ['other: json in utf-16', 'application/json; charset=utf-16', '{}'],
          ['other: no type', undefined, '{"a":1}'],
          ['other: garbage type', 'garbage', '{}'],
          ['other: form on json', 'application/x-www-form-urlencoded', 'a=1&b=2'],
          [
            'other: multipart on json',
            `multipart/form-data; boundary=${BOUNDARY}`,
            `--${BOUNDARY}--\r\n`,
          ],
          ['other: json+suffix', 'application/vnd.api+json', '{}'],
        )
        .map(([kind, type, bytes]) => ({ kind, type, bytes: Buffer.from(bytes, 'latin1') })),
    });
  }
  return fc
    .oneof(...arbs)
    .map((body) =>
      body === undefined || body.kind.startsWith('form: ')
        ? body
        : { ...body, invalid: judge(op, body, ctx) },
    );
}

const ACCEPTS = [
  'application/json',
  '*/*',
  'text/csv',
  'application/x-ndjson',
  'application/xml',
  'image/png',
  'text/html',
  'application/vnd.apache.parquet',
  'text/csv;q=0, application/json;q=0',
  'garbage',
  '',
];

/** A request to an operation, every part generated. */
export function requestArb(
  op: Operation,
  ctx: FuzzContext,
  tokens: readonly TokenKind[] = TOKEN_KINDS,
): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      path: pathArb(op, ctx),
      query: queryArb(op, ctx),
      body: bodyArb(op, ctx),
      token: fc.oneof(
        ...tokens.map((kind) => ({
          weight: kind === 'admin' || kind === 'user' ? 4 : kind === 'none' ? 3 : 1,
          arbitrary: fc.constant(kind),
        })),
      ),
      accept: fc.option(fc.constantFrom(...ACCEPTS), { freq: 3, nil: undefined }),
      ifNoneMatch: fc.option(fc.constantFrom('*', '"abc"', 'W/"1"', '"', 'x'.repeat(2000), ', ,'), {
        freq: 6,
        nil: undefined,
      }),
    })
    .map(({ path, query, body, token, accept, ifNoneMatch }): FuzzRequest => {
      const invalid = query.invalid ?? body?.invalid;
      const headers: Record<string, string> = {};
      const value = ctx.tokens[token];
      if (token === 'basic') headers.Authorization = 'Basic Og==';
      else if (token === 'empty-bearer') headers.Authorization = 'Bearer ';
      else if (value !== undefined) headers.Authorization = `Bearer ${value}`;
      if (accept !== undefined) headers.Accept = accept;
      if (ifNoneMatch !== undefined) headers['If-None-Match'] = ifNoneMatch;
      if (body?.type !== undefined) headers['Content-Type'] = body.type;
      return {
        method: op.method,
        target: `${path}${query.pairs.join('')}`,
        token,
        headers,
        body: body?.bytes,
        bodyKind: body?.kind,
        invalid,
      };
    });
}

// ---------------------------------------------------------------------------------------------------------
// Sending and checking

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

export function send(base: string, req: FuzzRequest, timeoutMs = 30_000): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers['Content-Length'] = req.body.length;
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.target,
        headers,
        agent,
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

export function closeAgent(): void {
  agent.destroy();
}

/** Problems of a value against a schema (the subset of JSON Schema the document uses). */
export function validate(
  value: unknown,
  schema: Schema | undefined,
  doc: OpenApiDoc,
  at = '$',
): string[] {
  const s = deref(schema, doc);
  if (value === null)
    return s.nullable === true || Object.keys(s).length === 0 ? [] : [`${at} is null`];
  if (Array.isArray(s.allOf))
    return (s.allOf as Schema[]).flatMap((part) => validate(value, part, doc, at));
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) {
      const fits = (s[key] as Schema[]).some((part) => validate(value, part, doc, at).length === 0);
      if (!fits) return [`${at} matches none of ${key}`];
    }
  }
  if (Array.isArray(s.enum) && !(s.enum as unknown[]).includes(value))
    return [`${at} not in enum: ${JSON.stringify(value)}`];
  switch (s.type) {
    case 'string':
      if (typeof value !== 'string') return [`${at} is not a string`];
      if (s.maxLength !== undefined && [...value].length > (s.maxLength as number))
        return [`${at} is longer than ${s.maxLength}`];
      if (s.minLength !== undefined && [...value].length < (s.minLength as number))
        return [`${at} is shorter than ${s.minLength}`];
      return [];
    case 'integer':
    case 'number':
      if (s.type === 'integer' ? !Number.isInteger(value) : typeof value !== 'number')
        return [`${at} is not an ${s.type}`];
      if (s.minimum !== undefined && (value as number) < (s.minimum as number))
        return [`${at} is below ${s.minimum}`];
      if (s.maximum !== undefined && (value as number) > (s.maximum as number))
        return [`${at} is above ${s.maximum}`];
      return [];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${at} is not a boolean`];
    case 'array':
      if (!Array.isArray(value)) return [`${at} is not an array`];
      if (s.minItems !== undefined && value.length < (s.minItems as number))
        return [`${at} has fewer than ${s.minItems} items`];
      if (s.maxItems !== undefined && value.length > (s.maxItems as number))
        return [`${at} has more than ${s.maxItems} items`];
      return value.flatMap((item, i) => validate(item, s.items as Schema, doc, `${at}[${i}]`));
    default:
      if (s.type !== 'object' && !s.properties) return [];
  }
  if (typeof value !== 'object' || Array.isArray(value)) return [`${at} is not an object`];
  const record = value as Record<string, unknown>;
  const properties = (s.properties as Record<string, Schema>) ?? {};
  const problems = ((s.required as string[]) ?? [])
    .filter((key) => !(key in record))
    .map((key) => `${at}.${key} is missing`);
  for (const [key, item] of Object.entries(record)) {
    if (key in properties) problems.push(...validate(item, properties[key], doc, `${at}.${key}`));
    else if (s.additionalProperties === false) problems.push(`${at}.${key} is not allowed`);
    else if (typeof s.additionalProperties === 'object') {
      problems.push(...validate(item, s.additionalProperties as Schema, doc, `${at}.${key}`));
    }
  }
  return problems;
}

const BAD_TOKENS = new Set<TokenKind>(['malformed', 'expired', 'revoked', 'wrong-key']);
const ANONYMOUS_TOKENS = new Set<TokenKind>(['none', 'empty-bearer', 'basic']);

const STACK = /\n\s+at [^\n]+\(?[^\n]*:\d+:\d+/;

/** What is wrong with an answer, or undefined. */
export function problemOf(
  op: Operation,
  req: FuzzRequest,
  answer: Answer,
  ctx: FuzzContext,
): string | undefined {
  const sent = `${decodeSafely(req.target)} ${req.body?.toString('utf8') ?? ''}`;
  for (const secret of ctx.secrets) {
    if (answer.text.includes(secret) && !sent.includes(secret))
      return `the answer leaks ${JSON.stringify(secret)}`;
  }
  if (STACK.test(answer.text)) return 'the answer holds a stack trace';
  if (answer.status >= 500) return `a ${answer.status}`;
  if (answer.status < 300 && req.invalid !== undefined) {
    return `accepted (${answer.status}) a request the document forbids: ${req.invalid}`;
  }
  // A token that is present must be valid, on public routes too (decisions.md); health looks at none.
  const health = op.template === '/health' || op.template.startsWith('/health/');
  if (answer.status < 300 && BAD_TOKENS.has(req.token) && !health) {
    return `accepted (${answer.status}) a ${req.token} token`;
  }
  // An operation whose security has no {} needs a token (and the document says so).
  if (answer.status < 300 && ANONYMOUS_TOKENS.has(req.token) && !op.anonymous) {
    return `answered ${answer.status} without a token, though the document asks for one`;
  }
  if (!op.statuses.has(answer.status)) return `status ${answer.status} is not documented`;
  const type = String(answer.headers['content-type'] ?? '');
  const documented = op.responses[String(answer.status)] as Schema | undefined;
  const content = documented?.content as Record<string, Schema> | undefined;
  if (answer.status >= 400) {
    if (!type.includes('application/json')) return `a ${answer.status} of type ${type}`;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return `a ${answer.status} whose body is not JSON`;
    }
    const problems = validate(body, content?.['application/json']?.schema as Schema, ctx.doc);
    if (problems.length > 0)
      return `the ${answer.status} body does not match its schema: ${problems.join('; ')}`;
    if (
      (op.layout === 'current' || (op.layout === 'mcp' && 'statusCode' in (body as object))) &&
      (body as { statusCode?: unknown }).statusCode !== answer.status
    ) {
      return 'statusCode differs from the status';
    }
    if (
      answer.status === 401 &&
      !/^Bearer/.test(String(answer.headers['www-authenticate'] ?? ''))
    ) {
      return 'a 401 without WWW-Authenticate: Bearer';
    }
    return undefined;
  }
  if (content && answer.status !== 304 && answer.text !== '') {
    const media = type.split(';')[0].trim();
    if (!(media in content))
      return `a ${answer.status} of type ${type}, not one of ${Object.keys(content).join(', ')}`;
    if (media === 'application/json') {
      const problems = validate(JSON.parse(answer.text), content[media].schema as Schema, ctx.doc);
      if (problems.length > 0)
        return `the ${answer.status} body does not match its schema: ${problems.slice(0, 3).join('; ')}`;
    }
  }
  return undefined;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
