import { AllOrNoneOf, AtLeastOneOf, Nullable, PaginationDto, ToBool, ToInt, ToStringArray } from '@app/platform';
import { IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString } from 'class-validator';

/**
 * Profile fields shared by POST and PUT /users, GitLab's wire names. The free-text ones take a JSON
 * `null`, which clears them: Grape keeps a key sent as null in `declared(params, include_missing:
 * false)`, and GitLab's update writes it (empty text for those whose column is not null).
 */
export class UserAttributesDto {
  @Nullable() @IsOptional() @IsString() messenger?: string | null;
  @Nullable() @IsOptional() @IsString() career_profile?: string | null;
  @Nullable() @IsOptional() @IsString() social_account?: string | null;
  @Nullable() @IsOptional() @IsString() website_url?: string | null;
  @Nullable() @IsOptional() @IsString() organization?: string | null;
  @IsOptional() @ToInt() @IsInt() projects_limit?: number;
  @IsOptional() @IsString() extern_uid?: string;
  @IsOptional() @IsString() provider?: string;
  @Nullable() @IsOptional() @IsString() bio?: string | null;
  @Nullable() @IsOptional() @IsString() location?: string | null;
  @IsOptional() @ToBool() @IsBoolean() admin?: boolean;
  @IsOptional() @ToBool() @IsBoolean() can_create_group?: boolean;
  @IsOptional() @ToBool() @IsBoolean() external?: boolean;
  @AllOrNoneOf(['extern_uid', 'provider']) readonly _identity?: never;
}

/** Property order follows GitLab's `params` block, so several failures read as Grape words them. */
export class CreateUserDto extends UserAttributesDto {
  @IsDefined() @IsString() email: string;
  @IsOptional() @IsString() password?: string;
  @IsOptional() @ToBool() @IsBoolean() reset_password?: boolean;
  @IsOptional() @ToBool() @IsBoolean() skip_confirmation?: boolean;
  @AtLeastOneOf(['password', 'reset_password']) readonly _password?: never;
  @IsDefined() @IsString() name: string;
  @IsDefined() @IsString() username: string;
}

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
];

export class UpdateUserDto extends UserAttributesDto {
  @IsOptional() @IsString() email?: string;
  @IsOptional() @IsString() password?: string;
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() username?: string;
  @IsOptional() @ToBool() @IsBoolean() skip_reconfirmation?: boolean;
}

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
}

export class DeleteUserDto {
  @IsOptional() @ToBool() @IsBoolean() hard_delete?: boolean;
}

export class AddSshKeyDto {
  @IsDefined() @IsString() key: string;
  @IsDefined() @IsString() title: string;
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

export class CustomAttributeValueDto {
  @IsDefined() @IsString() value: string;
}

export class ActivitiesDto extends PaginationDto {
  @IsOptional() @IsString() from?: string;
}
