// Type-level checks of fw/fetch: type-checked by `npx tsc -p tsconfig.json --noEmit`, never run.
// Each `@ts-expect-error` line must be a type error; each plain line must compile.
import { Readable } from 'node:stream';
import { type Client, Exchange, Target, withQuery, type PathArgs, type Scope } from 'fw-http/fetch';

export function fetchTemplateTypes(c: Scope, client: Client): void {
  const t = Target('t').open(client, { base: 'http://svc.internal' });

  // FETCH-65 '/users/{id}' demands { id }; other fields are query fields.
  void t.get(c, '/users/{id}', { id: 1 });
  void t.get(c, '/users/{id}', { id: 'a', page: 2, all: false, after: null, before: undefined });
  // @ts-expect-error REF-25 a missing field
  void t.get(c, '/users/{id}', {});
  // @ts-expect-error REF-25 a missing field among others
  void t.get(c, '/orgs/{org}/users/{id}', { org: 'acme' });
  // @ts-expect-error REF-26 a tuple for a named template
  void t.get(c, '/users/{id}', [1]);
  // @ts-expect-error a named template cannot go without its arguments
  void t.get(c, '/users/{id}');
  // @ts-expect-error FETCH-69 a segment is an int, bool or text
  void t.get(c, '/users/{id}', { id: { nested: 1 } });
  // @ts-expect-error FETCH-69 a segment is never null
  void t.get(c, '/users/{id}', { id: null });

  // FETCH-65 '/users/{}' demands a one-element tuple.
  void t.get(c, '/users/{}', [1]);
  void t.get(c, '/a/{}/b/{}', ['x', true]);
  const pair: readonly [string, number] = ['x', 2];
  void t.get(c, '/a/{}/b/{}', pair);
  // @ts-expect-error REF-27 an object for a positional template
  void t.get(c, '/users/{}', { id: 1 });
  // @ts-expect-error REF-28 a tuple too long
  void t.get(c, '/users/{}', [1, 2]);
  // @ts-expect-error REF-28 a tuple too short
  void t.get(c, '/a/{}/b/{}', ['x']);
  // @ts-expect-error REF-24 mixing {} and {name}, given an object
  void t.get(c, '/a/{}/{id}', { id: 1 });
  // @ts-expect-error REF-24 mixing {} and {name}, given a tuple
  void t.get(c, '/a/{}/{id}', [1]);

  // A template without placeholders takes a query object, or nothing.
  void t.get(c, '/health');
  void t.get(c, '/health', {});
  void t.get(c, '/search', { q: 'x', page: 1, exact: true, cursor: null });
  // @ts-expect-error REF-23 a query field of another type
  void t.get(c, '/search', { q: { nested: 1 } });
  // @ts-expect-error REF-23 a leftover field of another type
  void t.get(c, '/users/{id}', { id: 1, when: new Date() });
  // @ts-expect-error a plain template takes no tuple of segments
  void t.get(c, '/health', [1]);

  // Every call form checks the same way.
  void t.post(c, '/users/{id}', { id: 1 }, 'body');
  // @ts-expect-error REF-26
  void t.post(c, '/users/{id}', [1], 'body');
  void t.patch(c, '/users/{}', [1], null);
  void t.send(c, 'PROPFIND', '/users/{}', [1], null, {});
  void t.postJson(c, '/users/{}', [1], { a: 1 });
  // @ts-expect-error REF-34 text to a target JSON call
  void t.postJson(c, '/users/{}', [1], 'text');
  t.url(c, '/users/{id}', { id: 1 });
  // @ts-expect-error url() checks the template too
  t.url(c, '/users/{}', [1, 2]);

  // A template known only at run time is checked at run time.
  const dynamic: string = '/users/{id}';
  void t.get(c, dynamic, { id: 1 });
  const args: PathArgs<string> = [1];
  void args;

  // REF-34 a JSON call given text is a type error.
  // @ts-expect-error
  void client.postJson(c, 'http://x', 'text', {});
  // @ts-expect-error
  void client.putJson(c, 'http://x', 'text', {});
  // @ts-expect-error
  void client.patchJson(c, 'http://x', 'text', {});
  // @ts-expect-error
  void client.sendJson(c, 'POST', 'http://x', 'text', {});
  void client.postJson(c, 'http://x', { a: 'text inside an object is fine' }, {});
  void client.postJson(c, 'http://x', [1, 2], {});

  // REF-22 withQuery fields are int, bool, text or null/undefined.
  withQuery(c, 'http://x', { a: 1, b: 'x', c: true, d: null, e: undefined, f: 2n });
  // @ts-expect-error REF-22 an object field
  withQuery(c, 'http://x', { a: { b: 1 } });
  // @ts-expect-error REF-22 an array field
  withQuery(c, 'http://x', { a: [1] });

  // FETCH-75 a stream body without a length is a type error.
  const noLength = { kind: 'stream', stream: Readable.from([]) } as const;
  // @ts-expect-error FETCH-75 no length
  void new Exchange().begin(client, { url: 'http://x', body: noLength });
  void new Exchange().begin(client, {
    url: 'http://x',
    body: { kind: 'stream', stream: Readable.from([]), length: 0 },
  });
  void new Exchange().begin(client, {
    url: 'http://x',
    body: { kind: 'slice', bytes: new Uint8Array(1) },
  });

  // FETCH-17 the call options are all optional.
  void client.get(c, 'http://x', {});
  void client.get(c, 'http://x', {
    timeoutMs: 1,
    stallMs: 1,
    maxBody: 1,
    headers: [{ name: 'a', value: 'b' }],
  });
  // @ts-expect-error a header line is { name, value }
  void client.get(c, 'http://x', { headers: [['a', 'b']] });

  // VERS-05 the start modes.
  client.start('none');
  client.start('off');
  // @ts-expect-error only 'none' and its older name 'off'
  client.start('server');
}
