import { AllOrNoneOf, AtLeastOneOf, Nullable, PaginationDto, ToBool, ToInt, ToStringArray } from '@app/platform';
import { Allow, IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString } from 'class-validator';
import { userSetting, type UserSettingParam } from '../domain/user-settings';

/**
 * A setting's validation, from its entry (domain/user-settings.ts), as it would be written on the
 * property (`@Nullable() @IsOptional() @IsString()`): POST requires the `required` ones, a null of a
 * `clearable` one is kept (Grape keeps a key sent as null, and GitLab's update writes it).
 */
function SettingParam(param: UserSettingParam, use: 'create' | 'update' = 'update'): PropertyDecorator {
  const s = userSetting(param);
  const written: PropertyDecorator[] = [];
  if (s.clearable) written.push(Nullable() as PropertyDecorator);
  written.push(use === 'create' && s.required ? IsDefined() : IsOptional());
  if (s.type === 'boolean') written.push(ToBool(), IsBoolean());
  else if (s.type === 'int') written.push(ToInt(), IsInt());
  else written.push(IsString());
  // Applied bottom-up, as TypeScript applies decorators written on a property.
  return (target, property) => {
    for (const d of [...written].reverse()) d(target, property);
  };
}

/**
 * Profile fields shared by POST and PUT /users, GitLab's wire names in GitLab's order (its
 * `optional_attributes`), so several failures read as Grape words them. The settings' validation is
 * their entries'; `extern_uid` and `provider` (an identity, not a setting) are written here.
 */
export class UserAttributesDto {
  @SettingParam('messenger') messenger?: string | null;
  @SettingParam('career_profile') career_profile?: string | null;
  @SettingParam('social_account') social_account?: string | null;
  @SettingParam('website_url') website_url?: string | null;
  @SettingParam('organization') organization?: string | null;
  @SettingParam('projects_limit') projects_limit?: number;
  @IsOptional() @IsString() extern_uid?: string;
  @IsOptional() @IsString() provider?: string;
  @SettingParam('bio') bio?: string | null;
  @SettingParam('location') location?: string | null;
  @SettingParam('admin') admin?: boolean;
  @SettingParam('can_create_group') can_create_group?: boolean;
  @SettingParam('external') external?: boolean;
  @SettingParam('note') note?: string | null;
  @AllOrNoneOf(['extern_uid', 'provider']) readonly _identity?: never;
}

/** Property order follows GitLab's `params` block, so several failures read as Grape words them. */
export class CreateUserDto extends UserAttributesDto {
  @IsDefined() @IsString() email: string;
  @IsOptional() @IsString() password?: string;
  @IsOptional() @ToBool() @IsBoolean() reset_password?: boolean;
  @IsOptional() @ToBool() @IsBoolean() skip_confirmation?: boolean;
  @AtLeastOneOf(['password', 'reset_password']) readonly _password?: never;
  @SettingParam('name', 'create') name: string;
  @IsDefined() @IsString() username: string;
}

/** GitLab 10.x's `at_least_one_of` list for PUT /users/:id: the identity fields, then `optional_attributes`. */
export const UPDATABLE_USER_FIELDS = [
  'email',
  'password',
  'name',
  'username',
  'messenger',
  'career_profile',
  'social_account',
  'website_url',
  'organization',
  'projects_limit',
  'extern_uid',
  'provider',
  'bio',
  'location',
  'admin',
  'can_create_group',
  'external',
  'avatar',
  'note',
] as const;

/**
 * GitLab's later PUT /users parameters that Lode keeps nothing of: accepted and ignored, so an update
 * that carries only these (a client written for a newer GitLab) changes nothing instead of a 400.
 */
export const IGNORED_USER_FIELDS = [
  'skype',
  'linkedin',
  'twitter',
  'discord',
  'public_email',
  'commit_email',
  'private_profile',
  'theme_id',
  'color_scheme_id',
  'job_title',
  'pronouns',
  'pronunciation',
  'view_diffs_file_by_file',
  'skip_reconfirmation',
  'force_random_password',
] as const;

export class UpdateUserDto extends UserAttributesDto {
  @IsOptional() @IsString() email?: string;
  @IsOptional() @IsString() password?: string;
  @SettingParam('name') name?: string;
  @IsOptional() @IsString() username?: string;
  @IsOptional() @ToBool() @IsBoolean() skip_reconfirmation?: boolean;
  @Allow() skype?: unknown;
  @Allow() linkedin?: unknown;
  @Allow() twitter?: unknown;
  @Allow() discord?: unknown;
  @Allow() public_email?: unknown;
  @Allow() commit_email?: unknown;
  @Allow() private_profile?: unknown;
  @Allow() theme_id?: unknown;
  @Allow() color_scheme_id?: unknown;
  @Allow() job_title?: unknown;
  @Allow() pronouns?: unknown;
  @Allow() pronunciation?: unknown;
  @Allow() view_diffs_file_by_file?: unknown;
  @Allow() force_random_password?: unknown;
}

/** Every setting is a parameter of both DTOs and in the PUT's list (a type check fails until it is). */
const declared: UserSettingParam extends keyof CreateUserDto &
  keyof UpdateUserDto &
  (typeof UPDATABLE_USER_FIELDS)[number]
  ? true
  : never = true;
void declared;

export class ListUsersDto extends PaginationDto {
  @IsOptional() @IsString() username?: string;
  @IsOptional() @ToBool() @IsBoolean() active?: boolean;
  @IsOptional() @ToBool() @IsBoolean() blocked?: boolean;
  @IsOptional() @ToBool() @IsBoolean() external?: boolean;
  @IsOptional() @IsString() search?: string;
  @IsOptional() @IsString() extern_uid?: string;
  @IsOptional() @IsString() provider?: string;
  @AllOrNoneOf(['extern_uid', 'provider']) readonly _identity?: never;
  @IsOptional() @IsString() created_before?: string;
  @IsOptional() @IsString() created_after?: string;
  @IsOptional() @IsObject() custom_attributes?: Record<string, unknown>;
  /**
   * The order of keyset pages only (`pagination=keyset`): GitLab 10.8's `GET /users` takes no order
   * and answers newest first, which offset pages keep. Any string, so an order keyset lacks is 405.
   */
  @IsOptional() @IsString() order_by?: string;
  @IsOptional() @IsIn(['asc', 'desc']) sort?: 'asc' | 'desc';
  /** The keyset position, opaque to clients: GitLab 16.5's cursor-based keyset for users. */
  @IsOptional() @IsString() cursor?: string;
}

export class DeleteUserDto {
  @IsOptional() @ToBool() @IsBoolean() hard_delete?: boolean;
}

export class AddSshKeyDto {
  @IsDefined() @IsString() key: string;
  @IsDefined() @IsString() title: string;
  /** GitLab's `DateTime`: a date (`2026-01-21`, midnight UTC, as go-gitlab's ISOTime sends) or a date-time. */
  @IsOptional() @IsString() expires_at?: string | null;
}

export class AddGpgKeyDto {
  @IsDefined() @IsString() key: string;
}

export class AddEmailDto {
  @IsDefined() @IsString() email: string;
}

export class ListImpersonationTokensDto extends PaginationDto {
  @IsOptional() @IsIn(['all', 'active', 'inactive']) state?: 'all' | 'active' | 'inactive';
}

export class CreateImpersonationTokenDto {
  @IsDefined() @IsString() name: string;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
  @IsDefined() @ToStringArray() @IsString({ each: true }) scopes: string[];
}

export class CreatePersonalAccessTokenDto {
  @IsDefined() @IsString() name: string;
  /** Grape's `values:` over the scopes Lode has is checked by the controller (`@IsIn` on an array describes differently in dist/). */
  @IsDefined() @ToStringArray() @IsString({ each: true }) scopes: string[];
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

export class ListPersonalAccessTokensDto extends PaginationDto {
  /** Kept as text: a blank `user_id` is an administrator's 404, not "no filter". */
  @IsOptional() @IsString() user_id?: string;
  @IsOptional() @ToBool() @IsBoolean() revoked?: boolean;
  @IsOptional() @IsIn(['active', 'inactive']) state?: 'active' | 'inactive';
  @IsOptional() @IsString() created_before?: string;
  @IsOptional() @IsString() created_after?: string;
  @IsOptional() @IsString() last_used_before?: string;
  @IsOptional() @IsString() last_used_after?: string;
  @IsOptional() @IsString() search?: string;
}

export class RotatePersonalAccessTokenDto {
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

export class CustomAttributeValueDto {
  @IsDefined() @IsString() value: string;
}

export class ActivitiesDto extends PaginationDto {
  @IsOptional() @IsString() from?: string;
}
