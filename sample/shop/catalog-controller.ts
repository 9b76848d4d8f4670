import { IsInt, IsString } from 'class-validator';
import { Controller, Get, Redirect, Returns } from 'fw-http';

export class CatalogItem {
  @IsString() sku!: string;
  @IsString() name!: string;
  @IsInt() unitPrice!: number;
}

const ITEMS: CatalogItem[] = Array.from({ length: 240 }, (_, i) =>
  Object.assign(new CatalogItem(), {
    sku: `sku-${String(i + 1).padStart(4, '0')}`,
    name: `Catalog item number ${i + 1}`,
    unitPrice: 100 + ((i * 37) % 900),
  }),
);

@Controller()
export class CatalogController {
  /** At least 200 items, several KB: gzipped for clients that accept it. */
  @Get('/catalog')
  @Returns([CatalogItem])
  catalog(): CatalogItem[] {
    return ITEMS;
  }

  @Get('/old-catalog')
  @Returns(Redirect(301))
  oldCatalog() {
    return Redirect.to('/catalog');
  }
}
