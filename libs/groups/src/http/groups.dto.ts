import { Nullable, PaginationDto, ToBool, ToInt, ToIntArray } from '@app/platform';
import { IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString } from 'class-validator';
import { GROUP_ACCESS_LEVELS, type Visibility } from '../domain/access-level';
import {
  GROUP_SETTING_LIST,
  type GroupSettingWire,
  type ProjectCreationLevel,
  type SubgroupCreationLevel,
} from '../domain/group-settings';

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

/**
 * GitLab's parameters of POST /groups: one per stored setting, and `parent_id` (creation input, not a
 * setting). The properties are declared for the types and the OpenAPI document (the swagger plugin reads
 * the declarations); their validation is the setting's (`decorateSettings` below, from
 * domain/group-settings.ts). `name` and `path` are `required`.
 */
export class CreateGroupDto {
  name: string;
  path: string;
  description?: string;
  visibility?: Visibility;
  lfs_enabled?: boolean;
  request_access_enabled?: boolean;
  share_with_group_lock?: boolean;
  require_two_factor_authentication?: boolean;
  two_factor_grace_period?: number;
  project_creation_level?: ProjectCreationLevel;
  auto_devops_enabled?: boolean;
  subgroup_creation_level?: SubgroupCreationLevel;
  emails_disabled?: boolean;
  mentions_disabled?: boolean;
  default_branch_protection?: number;
  prevent_forking_outside_group?: boolean;
  parent_id?: number;
}

/**
 * GitLab's parameters of PUT /groups/:id, all optional. A JSON `null` description (`clearable`) clears
 * it (Grape keeps a key sent as null); any other null counts as not sent.
 */
export class UpdateGroupDto {
  name?: string;
  path?: string;
  description?: string | null;
  visibility?: Visibility;
  lfs_enabled?: boolean;
  request_access_enabled?: boolean;
  share_with_group_lock?: boolean;
  require_two_factor_authentication?: boolean;
  two_factor_grace_period?: number;
  project_creation_level?: ProjectCreationLevel;
  auto_devops_enabled?: boolean;
  subgroup_creation_level?: SubgroupCreationLevel;
  emails_disabled?: boolean;
  mentions_disabled?: boolean;
  default_branch_protection?: number;
  prevent_forking_outside_group?: boolean;
}

/** Every setting is a parameter of both DTOs, and they have no other parameter but POST's `parent_id`. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const declared: [
  Same<Exclude<keyof CreateGroupDto, 'parent_id'>, GroupSettingWire>,
  Same<keyof UpdateGroupDto, GroupSettingWire>,
] = [true, true];
void declared;

type PropertyDecorator = (target: object, property: string) => void;
/** Decorators as they would be written on the property, applied bottom-up as TypeScript applies them. */
const decorate = (dto: { prototype: object }, property: string, written: PropertyDecorator[]) => {
  for (const d of [...written].reverse()) d(dto.prototype, property);
};

/**
 * Each setting's decorators, as they were written on the property (`@Nullable() @IsOptional() @IsString()`),
 * in the table's order (class-validator's order of errors): POST requires the `required` ones, PUT
 * keeps a null for the `clearable` ones.
 */
function decorateSettings(dto: { prototype: object }, use: 'create' | 'update'): void {
  for (const s of GROUP_SETTING_LIST) {
    const written: PropertyDecorator[] = [];
    if (use === 'update' && s.clearable) written.push(Nullable());
    written.push(use === 'create' && s.required ? IsDefined() : IsOptional());
    if (s.type === 'boolean') written.push(ToBool(), IsBoolean());
    // Decorators apply bottom-up: the type is checked first (`is invalid`), then the values.
    else if (s.type === 'int') written.push(ToInt(), ...(s.values ? [IsIn(s.values as unknown[])] : []), IsInt());
    else if (s.type === 'enum') written.push(IsIn(s.values as unknown[]));
    else written.push(IsString());
    decorate(dto, s.wire, written);
  }
}
decorateSettings(CreateGroupDto, 'create');
decorate(CreateGroupDto, 'parent_id', [IsOptional(), ToInt(), IsInt()]);
decorateSettings(UpdateGroupDto, 'update');

export class ListMembersDto extends PaginationDto {
  @IsOptional() @IsString() query?: string;
  /** GitLab 13.x+: `user_ids[]=1&user_ids[]=2`, a JSON array or `1,2`. */
  @IsOptional() @ToIntArray() @IsInt({ each: true }) user_ids?: number[];
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

/** `POST /groups/:id/share` (GitLab 12.2+): `expires_at` absent, null or `""` (Terraform's unset) is no expiry. */
export class ShareGroupDto {
  @IsDefined() @ToInt() @IsInt() group_id: number;
  // Decorators apply bottom-up: the type is checked first (`is invalid`), then the values.
  @IsDefined() @ToInt() @IsIn(GROUP_ACCESS_LEVELS) @IsInt() group_access: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

/** `POST /groups/:id/transfer` (GitLab 14.6+): no `group_id` makes the group top-level. */
export class TransferGroupDto {
  @IsOptional() @ToInt() @IsInt() group_id?: number;
}

export class CustomAttributeValueDto {
  @IsDefined() @IsString() value: string;
}
