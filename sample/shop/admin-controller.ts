import { IsArray, IsIn, IsInt, IsString, Matches, MaxLength } from 'class-validator';
import { Body, Controller, Ctx, Get, Post, Requires, Returns } from 'fw-http';
import { devKeys, ownUrl, ShopJwt } from './dev-issuer';
import { OrderBook } from './order-book';

export class Stats {
  @IsInt() orders!: number;
}

/** `GET /admin/stats`: needs a JWT of the development issuer with scope `admin`. */
@Controller('/admin')
export class AdminController {
  constructor(readonly book: OrderBook) {}

  @Requires(ShopJwt, 'admin')
  @Get('/stats')
  @Returns(Stats)
  async stats(): Promise<Stats> {
    return Object.assign(new Stats(), { orders: await this.book.count() });
  }
}

/** The public keys of the development issuer; tokens are verified against them. */
@Controller('/.well-known')
export class JwksController {
  @Get('/jwks.json')
  @Returns(Object)
  jwks(): object {
    return devKeys.jwks;
  }
}

export class TokenRequest {
  @IsIn(['alice', 'bob']) account!: 'alice' | 'bob';
  // RFC 6749 §3.3 scope tokens: printable ASCII but space, `"` and `\`.
  @IsArray()
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  @Matches(/^[\x21\x23-\x5b\x5d-\x7e]+$/, { each: true })
  scopes!: string[];
}

export class IssuedToken {
  @IsString() token!: string;
}

/** `POST /dev/token`: a 15-minute JWT for a demo account; registered only outside NODE_ENV=production. */
@Controller('/dev')
export class DevTokenController {
  @Post('/token')
  @Returns(IssuedToken)
  async token(@Body() body: TokenRequest, c: Ctx): Promise<IssuedToken> {
    return Object.assign(new IssuedToken(), {
      token: await devKeys.sign({ issuer: ownUrl(c), account: body.account, scopes: body.scopes }),
    });
  }
}
