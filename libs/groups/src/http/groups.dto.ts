import { Nullable, PaginationDto, ToBool, ToInt, ToIntArray } from '@app/platform';
import { IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString } from 'class-validator';
import { GROUP_ACCESS_LEVELS, VISIBILITIES, type Visibility } from '../domain/access-level';

/** GitLab's GL parameters of group lists. */
export class ListGroupsDto extends PaginationDto {
  @IsOptional() @ToIntArray() @IsInt({ each: true }) skip_groups?: number[];
  @IsOptional() @ToBool() @IsBoolean() all_available?: boolean;
  @IsOptional() @IsString() search?: string;
  @IsOptional() @IsIn(['name', 'path']) order_by?: 'name' | 'path';
  @IsOptional() @IsIn(['asc', 'desc']) sort?: 'asc' | 'desc';
  @IsOptional() @ToBool() @IsBoolean() statistics?: boolean;
  @IsOptional() @ToBool() @IsBoolean() owned?: boolean;
  @IsOptional() @IsObject() custom_attributes?: Record<string, unknown>;
}

export class CreateGroupDto {
  @IsDefined() @IsString() name: string;
  @IsDefined() @IsString() path: string;
  @IsOptional() @IsString() description?: string;
  @IsOptional() @IsIn(VISIBILITIES) visibility?: Visibility;
  @IsOptional() @ToBool() @IsBoolean() lfs_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() request_access_enabled?: boolean;
  @IsOptional() @ToInt() @IsInt() parent_id?: number;
}

/** A JSON `null` description clears it (Grape keeps a key sent as null); any other null counts as not sent. */
export class UpdateGroupDto {
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() path?: string;
  @Nullable() @IsOptional() @IsString() description?: string | null;
  @IsOptional() @IsIn(VISIBILITIES) visibility?: Visibility;
  @IsOptional() @ToBool() @IsBoolean() lfs_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() request_access_enabled?: boolean;
}

export class ListMembersDto extends PaginationDto {
  @IsOptional() @IsString() query?: string;
}

export class AddMemberDto {
  @IsDefined() @ToInt() @IsInt() user_id: number;
  @IsDefined() @ToInt() @IsIn(GROUP_ACCESS_LEVELS) access_level: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

export class UpdateMemberDto {
  @IsDefined() @ToInt() @IsIn(GROUP_ACCESS_LEVELS) access_level: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

export class CustomAttributeValueDto {
  @IsDefined() @IsString() value: string;
}
