import { IsInt, IsOptional, IsString } from 'class-validator';

export class Transfer {
  @IsString() to!: string;
  @IsInt() amount!: number;
}

export class TransferQuery {
  @IsOptional() @IsString() note?: string;
}
