import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK, type KeyLike } from 'jose';

/**
 * What the key-set server answers: the keys, nothing ever, non-JSON, a huge body, a redirect
 * elsewhere, or (`hold`) the keys once the test calls `release()`.
 */
export type JwksMode =
  'keys' | 'hang' | 'junk' | 'huge' | 'redirect' | 'hang-body' | 'no-keys' | 'hold';

/** A real key-set server on 127.0.0.1 counting the requests it gets. */
export interface JwksServer {
  url: string;
  origin: string;
  mode: JwksMode;
  keys: JWK[];
  hits: number;
  /** An OpenID discovery document at /.well-known/openid-configuration naming this issuer. */
  issuer: string;
  /** Answers every held request (mode `hold`) with the keys as they are now. */
  release(): void;
  /** Resolves once the key set has been asked for `n` times in all. */
  hitsReach(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function jwksServer(keys: JWK[]): Promise<JwksServer> {
  const hanging = new Set<ServerResponse>();
  const held: ServerResponse[] = [];
  const waiting: { n: number; resolve: () => void }[] = [];
  const answer = (res: ServerResponse) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: state.keys }));
  };
  const state: JwksServer = {
    url: '',
    origin: '',
    mode: 'keys',
    keys,
    hits: 0,
    issuer: '',
    release: () => held.splice(0).forEach(answer),
    hitsReach: (n) =>
      new Promise<void>((resolve) => {
        if (state.hits >= n) resolve();
        else waiting.push({ n, resolve });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer: state.issuer, jwks_uri: state.url }));
      return;
    }
    state.hits++;
    for (const w of waiting.filter((w) => state.hits >= w.n)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
    switch (state.mode) {
      case 'keys':
        answer(res);
        return;
      case 'hold':
        held.push(res);
        hanging.add(res);
        return;
      case 'no-keys':
        res.end(JSON.stringify({ keys: 'none' }));
        return;
      case 'hang':
        hanging.add(res);
        return;
      case 'hang-body':
        hanging.add(res);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"keys":[');
        return;
      case 'junk':
        res.end('<html>not a key set</html>');
        return;
      case 'huge':
        res.end(JSON.stringify({ keys: [], pad: 'x'.repeat(1024 * 1024) }));
        return;
      case 'redirect':
        res.writeHead(302, { location: 'http://127.0.0.2:1/jwks' });
        res.end();
        return;
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${port}`;
  state.url = `${state.origin}/jwks.json`;
  state.issuer = state.origin;
  return state;
}

/** A signing key with its public JWK (carrying `kid` and `alg`). */
export interface SigningKey {
  readonly alg: 'RS256' | 'ES256';
  readonly kid: string;
  readonly privateKey: KeyLike;
  readonly publicKey: KeyLike;
  readonly jwk: JWK;
}

export async function signingKey(alg: 'RS256' | 'ES256', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { alg, kid, privateKey, publicKey, jwk };
}

/** A token signed with `key`, claims as given (exp one hour on unless given). */
export function sign(
  key: SigningKey,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ exp: now + 3600, iat: now, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey);
}

/** An unsigned token (`alg: none`): header and payload, empty signature. */
export function unsigned(claims: Record<string, unknown>): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
}
