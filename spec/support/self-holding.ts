import {
  IsArray,
  IsObject,
  IsOptional,
  IsString,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { Type } from 'class-transformer';

// Body classes that hold themselves, for the depth bound (maxDepth): one read by fw's compiled
// reader, one that falls back to class-transformer + class-validator (its custom constraint).

export class TreeNode {
  @IsString() name!: string;
  @IsOptional() @ValidateNested() @Type(() => TreeNode) child?: TreeNode;
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => TreeNode)
  children?: TreeNode[];
  @IsOptional() @IsObject() meta?: object;
}

@ValidatorConstraint({ name: 'nonBlank' })
class NonBlank implements ValidatorConstraintInterface {
  validate(v: unknown): boolean {
    return typeof v === 'string' && v.trim() !== '';
  }
}

/** Read through class-transformer + class-validator (the custom constraint makes it fall back). */
export class SlowNode {
  @Validate(NonBlank) name!: string;
  @IsOptional() @ValidateNested() @Type(() => SlowNode) child?: SlowNode;
  @IsOptional() @IsObject() meta?: object;
}
