import { Body, Controller, Post, Query, Returns, Status } from 'fw-http';
import type { Transfer, TransferQuery } from './type-only-body.dto.fixture';

// A controller whose @Body() and @Query() classes are imported with `import type`:
// the classes are gone at run time, so TypeScript writes no class into design:paramtypes.

@Controller()
export class Transfers {
  @Post('/transfers')
  @Returns(Status(201, Object))
  create(@Body() transfer: Transfer, @Query() query: TransferQuery) {
    return { transfer, query };
  }
}
