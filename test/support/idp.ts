import { KeyObject, createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';

interface Key {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function b64(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** A local identity provider: a discovery document, a JWKS, and tokens signed with its keys. */
export class TestIdp {
  readonly keys: Key[] = [];
  /** Keys published in the JWKS (a key can exist before it is published, to test rotation). */
  published = new Set<string>();
  jwksFetches = 0;
  issuer = '';
  private server?: Server;

  addKey(kid: string, alg: 'RS256' | 'ES256', publish = true): Key {
    const pair =
      alg === 'RS256'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = { kid, alg, ...pair };
    this.keys.push(key);
    if (publish) this.published.add(kid);
    return key;
  }

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      if (request.url === '/.well-known/openid-configuration') {
        response.setHeader('Content-Type', 'application/json');
        response.end(JSON.stringify({ issuer: this.issuer, jwks_uri: `${this.issuer}/jwks` }));
      } else if (request.url === '/jwks') {
        this.jwksFetches += 1;
        const keys = this.keys
          .filter((key) => this.published.has(key.kid))
          .map((key) => ({
            ...key.publicKey.export({ format: 'jwk' }),
            kid: key.kid,
            alg: key.alg,
            use: 'sig',
          }));
        response.setHeader('Content-Type', 'application/json');
        response.end(JSON.stringify({ keys }));
      } else {
        response.statusCode = 404;
        response.end();
      }
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.issuer;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** A token signed with one of the keys; `header` overrides header fields. */
  token(
    claims: Record<string, unknown>,
    kid = this.keys[0].kid,
    header: Record<string, unknown> = {},
  ): string {
    const key = this.keys.find((candidate) => candidate.kid === kid) as Key;
    const head = `${b64(JSON.stringify({ alg: key.alg, typ: 'JWT', kid, ...header }))}.${b64(JSON.stringify(claims))}`;
    const signature =
      key.alg === 'RS256'
        ? sign('sha256', Buffer.from(head), key.privateKey)
        : sign('sha256', Buffer.from(head), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
    return `${head}.${b64(signature)}`;
  }

  /** The classic confusion attack: HS256 "signed" with the provider's public key. */
  hs256WithPublicKey(claims: Record<string, unknown>): string {
    const key = this.keys[0];
    const head = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: key.kid }))}.${b64(JSON.stringify(claims))}`;
    const secret = key.publicKey.export({ format: 'pem', type: 'spki' });
    return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
  }

  /** A token that carries its own (attacker's) key in the header. */
  withEmbeddedKey(claims: Record<string, unknown>): string {
    const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = attacker.publicKey.export({ format: 'jwk' });
    const head = `${b64(JSON.stringify({ alg: 'RS256', typ: 'JWT', jwk }))}.${b64(JSON.stringify(claims))}`;
    return `${head}.${b64(sign('sha256', Buffer.from(head), attacker.privateKey))}`;
  }

  algNone(claims: Record<string, unknown>): string {
    return `${b64(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64(JSON.stringify(claims))}.`;
  }
}
