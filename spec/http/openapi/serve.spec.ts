import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsInt, IsString } from 'class-validator';
import { App, Body, Controller, Get, Post, Returns, Status } from 'fw-http';
import { securityHeaders } from 'fw-http/browser';

class NewNote {
  @IsString() text!: string;
}
class Note {
  @IsInt() id!: number;
  @IsString() text!: string;
}

@Controller('/notes')
class NotesController {
  @Get()
  @Returns([Note])
  list(): Note[] {
    return [];
  }

  @Post()
  @Returns(Status(201, Note))
  create(@Body() note: NewNote): Note {
    return Object.assign(new Note(), { id: 1, ...note });
  }
}

describe('serving and writing the document', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'fw-openapi-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('OAS-02 serves the document at GET /openapi.json as application/json', async () => {
    const app = new App({ title: 'notes' }).controllers(NotesController).openapi();
    const res = await app.inject({ url: '/openapi.json' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual(app.document());
    expect(res.json<{ paths: object }>().paths).toHaveProperty('/notes');
  });

  it('OAS-02 the serving path is configurable and serving can be turned off', async () => {
    const moved = new App().controllers(NotesController).openapi({ serve: '/api/spec.json' });
    expect((await moved.inject({ url: '/api/spec.json' })).status).toBe(200);
    expect((await moved.inject({ url: '/openapi.json' })).status).toBe(404);
    const off = new App().controllers(NotesController).openapi({ serve: false });
    expect((await off.inject({ url: '/openapi.json' })).status).toBe(404);
    expect(off.document().paths).toHaveProperty('/notes');
  });

  it('OAS-02 the routes that serve the description are not in it; HEAD is answered too', async () => {
    const app = new App().controllers(NotesController).openapi().docs();
    expect(Object.keys(app.document().paths)).toEqual(['/notes']);
    expect(app.routes.map((r) => r.path)).toEqual(
      expect.arrayContaining(['/openapi.json', '/docs']),
    );
    const head = await app.inject({ method: 'HEAD', url: '/openapi.json' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('OAS-03 app.openapi({ path }) writes the document at startup, making directories, pretty-printed with a trailing newline', () => {
    const file = join(dir, 'deep', 'er', 'openapi.json');
    const app = new App({ title: 'notes' }).controllers(NotesController).openapi({ path: file });
    expect(() => statSync(file)).toThrow();
    app.build();
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(JSON.stringify(JSON.parse(text), null, 2) + '\n');
    expect(text.split('\n')[1]).toBe('  "openapi": "3.2.0",');
    expect(JSON.parse(text).info.title).toBe('notes');
  });

  it('OAS-03 a stale file is replaced; an unchanged one is left alone', () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, '{"old":true}\n');
    new App().controllers(NotesController).openapi({ path: file }).build();
    const fresh = readFileSync(file, 'utf8');
    expect(JSON.parse(fresh).openapi).toBe('3.2.0');
    const stamp = new Date(Math.floor(statSync(file).mtimeMs / 1000) * 1000 - 60_000);
    utimesSync(file, stamp, stamp);
    const stamped = statSync(file).mtimeMs;
    new App().controllers(NotesController).openapi({ path: file }).build();
    expect(statSync(file).mtimeMs).toBe(stamped);
    expect(readFileSync(file, 'utf8')).toBe(fresh);
  });

  it('OAS-04 the document from build(), the file written at startup and GET /openapi.json are identical', async () => {
    const file = join(dir, 'openapi.json');
    const app = new App({ title: 'notes', version: '3.0.0' })
      .controllers(NotesController)
      .openapi({ path: file })
      .build();
    const fromBuild = JSON.stringify(app.document(), null, 2) + '\n';
    const written = readFileSync(file, 'utf8');
    const served = (await app.inject({ url: '/openapi.json' })).body;
    expect(written).toBe(fromBuild);
    expect(served).toBe(fromBuild);
    // Built from the records that serve requests: every record the app routes (but the description's own) is in it.
    for (const r of app.routes.filter((r) => !r.builtIn))
      expect(app.document().paths[r.path]).toHaveProperty(r.method.toLowerCase());
  });

  it('the document is built once and cannot be changed by a reader', () => {
    const app = new App().controllers(NotesController);
    const doc = app.document();
    expect(app.document()).toBe(doc);
    expect(Object.isFrozen(doc.paths['/notes'])).toBe(true);
    expect(() => ((doc as { openapi: string }).openapi = '3.0.0')).toThrow(TypeError);
  });
});

describe('the docs page', () => {
  it('GET /docs is an HTML page loading Swagger UI from the app itself, with no inline script', async () => {
    const app = new App({ title: 'notes <&>' }).controllers(NotesController).openapi().docs();
    const page = await app.inject({ url: '/docs' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const scripts = [...page.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => m[1].trim())).toEqual([
      'src="/docs/swagger-ui-bundle.js"',
      'src="/docs/swagger-ui-standalone-preset.js"',
      'src="/docs/init.js"',
    ]);
    expect(scripts.every((m) => m[2] === '')).toBe(true);
    expect(page.body).toContain('<link rel="stylesheet" href="/docs/swagger-ui.css">');
    expect(page.body).toContain('<title>notes &#60;&#38;&#62; API reference</title>');
    expect(page.body).not.toMatch(/https?:\/\//);
  });

  it('GET /docs carries a strict Content-Security-Policy: scripts, styles and fetches from the app only, nothing inline', async () => {
    const app = new App({ log: () => {} })
      .use(securityHeaders())
      .controllers(NotesController)
      .openapi()
      .docs();
    const page = await app.inject({ url: '/docs' });
    const policy = new Map(
      String(page.headers['content-security-policy'])
        .split(/;\s*/)
        .map((d) => [d.split(' ')[0]!, d.split(' ').slice(1).join(' ')]),
    );
    // The style elements Swagger UI's scripts add (the logo's colours) are allowed by hash only.
    expect(policy.get('style-src')).toMatch(/^'self'( 'sha256-[A-Za-z0-9+/]{43}=')+$/);
    policy.delete('style-src');
    expect(Object.fromEntries(policy)).toEqual({
      'default-src': "'none'",
      'script-src': "'self'",
      'img-src': "'self' data:",
      'connect-src': "'self'",
      'base-uri': "'none'",
      'form-action': "'none'",
      'object-src': "'none'",
      'frame-ancestors': "'none'",
    });
    // The app's other answers keep securityHeaders()' own policy.
    const doc = await app.inject({ url: '/openapi.json' });
    expect(doc.headers['content-security-policy']).toBe("frame-ancestors 'none'");
  });

  it('serves the Swagger UI files from swagger-ui-dist byte for byte, and an initializer pointing at the spec', async () => {
    const app = new App()
      .controllers(NotesController)
      .openapi({ serve: '/spec.json' })
      .docs({ path: '/reference', spec: '/spec.json' });
    const dist = (require('swagger-ui-dist/absolute-path.js') as () => string)();
    for (const [file, type] of [
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui-standalone-preset.js', 'text/javascript; charset=utf-8'],
    ]) {
      const res = await app.inject({ url: `/reference/${file}` });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.bytes.equals(readFileSync(join(dist, file)))).toBe(true);
    }
    const init = await app.inject({ url: '/reference/init.js' });
    expect(init.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(init.body).toContain('url: "/spec.json"');
    expect(init.body).toContain('SwaggerUIBundle(');
    expect(init.body).toContain('validatorUrl: null');
    expect((await app.inject({ url: '/reference' })).body).toContain('src="/reference/init.js"');
    expect((await app.inject({ url: '/docs' })).status).toBe(404);
  });
});
