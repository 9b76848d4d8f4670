import { IsString } from 'class-validator';
import { z } from 'zod';
import { Body, Controller, Get, Post, RateLimit, Returns, fail, type Infer } from 'fw-http';
import { Session } from 'fw-http/browser';

/** The login body as a zod schema: any Standard Schema reads a body beside class-validator classes. */
export const Login = z.object({ account: z.enum(['alice', 'bob']) }).meta({ title: 'Login' });

export class Me {
  @IsString() account!: string;
}

/** Cookie sessions: log in as a demo account, then ask who you are. */
@Controller()
export class SessionController {
  /** Sets the signed session cookie; at most 5 per minute per address. */
  @Post('/login')
  @RateLimit({ max: 5, perSeconds: 60 })
  @Returns(Me)
  login(@Body(Login) body: Infer<typeof Login>, session: Session): Me {
    session.set('account', body.account);
    return Object.assign(new Me(), { account: body.account });
  }

  /** The session's account; 401 without a session or with a badly signed one. */
  @Get('/me')
  @Returns(Me)
  me(session: Session): Me {
    const account = session.get<string>('account');
    if (account === undefined) throw fail.unauthorized('no session: POST /login first');
    return Object.assign(new Me(), { account });
  }
}
