import { App, Controller, Delete, Get, Param, Post, Put, Returns } from 'fw-http';

@Controller('/items')
class ItemsController {
  @Returns(Object)
  @Get()
  list() {
    return ['a'];
  }
  @Returns(Object)
  @Post()
  add() {
    return { added: true };
  }
  @Returns(Object)
  @Get('/{id}')
  one(@Param('id') id: string) {
    return { id };
  }
  @Returns(Object)
  @Put('/{id}')
  replace(@Param('id') id: string) {
    return { replaced: id };
  }
  @Returns(Object)
  @Delete('/{id}/tags/{tag}')
  untag(@Param('id') id: string, @Param('tag') tag: string) {
    return { id, tag };
  }
  @Returns(String)
  @Get('/special/all')
  special() {
    return 'special';
  }
}

const app = new App({ log: () => {} }).controllers(ItemsController);

describe('routing', () => {
  it('CORE-54 a request that matches no route is 404 in the failure shape', async () => {
    const res = await app.inject({ url: '/nothing/here' });
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({ error: 'no route for GET /nothing/here', status: 404 });
  });

  it('CORE-55 a path known only under other methods is 405 with Allow (HEAD beside GET, OPEN-53)', async () => {
    const res = await app.inject({ method: 'PATCH', url: '/items/7' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, PUT');
    expect((await app.inject({ method: 'DELETE', url: '/items' })).headers.allow).toBe(
      'GET, HEAD, POST',
    );
  });

  it('CORE-56 HEAD of a GET route gets the GET headers and no body', async () => {
    const get = await app.inject({ url: '/items/7' });
    const head = await app.inject({ method: 'HEAD', url: '/items/7' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers['content-type']).toBe('application/json');
  });

  it('fixed segments win over {name} and templates match segment by segment', async () => {
    expect((await app.inject({ url: '/items/special/all' })).body).toBe('special');
    expect((await app.inject({ method: 'DELETE', url: '/items/3/tags/red' })).json()).toEqual({
      id: '3',
      tag: 'red',
    });
    expect((await app.inject({ url: '/items/a%2Fb' })).json()).toEqual({ id: 'a/b' });
    expect((await app.inject({ url: '/items/' })).status).toBe(404);
  });

  it('CORE-57 the public API comes from three doors', () => {
    const http = require('fw-http');
    const cache = require('fw-http/cache');
    const fetch = require('fw-http/fetch');
    for (const name of [
      'App',
      'Controller',
      'Post',
      'Returns',
      'Status',
      'Optional',
      'Reply',
      'Redirect',
      'Bytes',
      'fail',
      'Ctx',
      'Run',
      'headers',
    ])
      expect(http[name]).toBeDefined();
    for (const name of ['Space', 'MemoryStore', 'RedisStore']) expect(cache[name]).toBeDefined();
    for (const name of ['Client', 'Target', 'Exchange', 'withQuery'])
      expect(fetch[name]).toBeDefined();
  });
});
