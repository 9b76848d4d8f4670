import { IsInt, IsString, Length, Min } from 'class-validator';
import { App, Bound, Controller, Form, Post, Returns } from 'fw-http';

class Signup {
  @IsString() @Length(2, 20) name!: string;
  @IsInt() @Min(18) age!: number;
}

@Controller()
class FormController {
  @Returns(Object)
  @Post('/plain')
  plain(@Form() s: Signup) {
    return { ...s, isSignup: s instanceof Signup };
  }
  @Returns(Signup)
  @Post('/bound')
  bound(@Form(Signup) b: Bound<Signup>) {
    if (!b.ok) throw b.fail();
    return b.value as Signup;
  }
  @Returns(Object)
  @Post('/errors')
  errors(@Form(Signup) b: Bound<Signup>) {
    return { ok: b.ok, value: b.value, errors: b.errors };
  }
  @Returns(Object)
  @Post('/fields')
  fields(@Form(Signup) b: Bound<Signup>) {
    return { ok: b.ok, fields: { ...b.fields }, prototype: Object.getPrototypeOf(b.fields) };
  }
}

const app = new App({ log: () => {} }).controllers(FormController);
const form = (url: string, body: string, type = 'application/x-www-form-urlencoded') =>
  app.inject({ method: 'POST', url, headers: { 'content-type': type }, body });

describe('forms', () => {
  it('@Form reads an urlencoded body into its class, converting values', async () => {
    expect((await form('/plain', 'name=ann&age=30')).json()).toEqual({
      name: 'ann',
      age: 30,
      isSignup: true,
    });
    expect((await form('/plain', 'name=ann&age=x')).json()).toEqual({
      error: 'form.age: must be an integer',
      status: 400,
    });
  });

  it('CORE-26 a form sent in the wrong encoding is 400', async () => {
    const res = await form('/plain', '{"name":"ann","age":30}', 'application/json');
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({
      error: 'form: must be sent as application/x-www-form-urlencoded',
      status: 400,
    });
  });

  it('CORE-27 a Bound form whose handler calls b.fail() answers 422 carrying the field errors', async () => {
    const res = await form('/bound', 'name=a&age=30');
    expect(res.status).toBe(422);
    expect(res.json<{ error: string }>().error).toMatch(/^form\.name: /);
    expect((await form('/bound', 'name=ann&age=30')).json()).toEqual({ name: 'ann', age: 30 });
  });

  it('CORE-27 a Bound form carries every failing field, in field order; a plain form stops at the first', async () => {
    const both = await form('/bound', 'name=a&age=12');
    expect(both.status).toBe(422);
    expect(both.json<{ error: string }>().error).toBe(
      'form.name: must be longer than or equal to 2 characters; form.age: must not be less than 18',
    );
    const missing = await form('/errors', 'age=x');
    expect(missing.json()).toEqual({
      ok: false,
      value: null,
      errors: ['form.name: is required', 'form.age: must be an integer'],
    });
    expect((await form('/errors', 'name=ann&age=30')).json()).toEqual({
      ok: true,
      value: { name: 'ann', age: 30 },
      errors: [],
    });
    expect((await form('/plain', 'name=a&age=12')).json()).toEqual({
      error: 'form.name: must be longer than or equal to 2 characters',
      status: 400,
    });
  });

  it('a Bound form keeps every field as sent, repeats as lists, in a record with no prototype', async () => {
    const res = await form(
      '/fields',
      'name=ann&age=30&csrf=t0k&tag=a&tag=b&__proto__=x&__proto__=y',
    );
    expect(res.json()).toEqual({
      ok: true,
      fields: { name: 'ann', age: '30', csrf: 't0k', tag: ['a', 'b'], ['__proto__']: ['x', 'y'] },
      prototype: null,
    });
  });
});
