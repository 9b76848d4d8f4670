import 'reflect-metadata';
import { IsString } from 'class-validator';
import { request } from 'undici';
import { App, Controller, Get, Returns } from 'fw-http';

class Named {
  @IsString() first!: string;
  @IsString() second!: string;
}

let app: App;

@Controller()
class Writers {
  // The answer's second field's getter answers another request: inject runs it to its write at once.
  @Get('/a')
  @Returns(Named)
  a() {
    return {
      first: 'é',
      get second() {
        void app.inject({ method: 'GET', url: '/b' });
        return 'x';
      },
    };
  }

  @Get('/b')
  @Returns(Named)
  b() {
    return { first: 'plain', second: 'plain' };
  }
}

// Every JSON answer is written by its route's compiled writer; what one write notes about its
// text (whether it is ASCII, so its length is its size in bytes) belongs to that write alone.

describe("a JSON answer's Content-Length", () => {
  it("is its own text's size, whatever another answer written while it is being written was", async () => {
    app = new App({ log: () => {} }).controllers(Writers);
    const base = `http://127.0.0.1:${(await app.listen({ port: 0 })).port}`;
    try {
      const res = await request(`${base}/a`);
      const text = await res.body.text();
      expect(text).toBe('{"first":"é","second":"x"}');
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
    } finally {
      await app.close();
    }
  });
});
