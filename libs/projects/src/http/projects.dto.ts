import { PROJECT_ACCESS_LEVELS, VISIBILITIES, type Visibility } from '@app/groups';
import { Nullable, PaginationDto, ToBool, ToInt, ToStringArray } from '@app/platform';
import { IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString } from 'class-validator';

export const ORDER_BY = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at'] as const;

/** GitLab's PL parameters. */
export class ListProjectsDto extends PaginationDto {
  @IsOptional() @ToBool() @IsBoolean() archived?: boolean;
  @IsOptional() @IsIn(VISIBILITIES) visibility?: Visibility;
  @IsOptional() @IsIn(ORDER_BY) order_by?: (typeof ORDER_BY)[number];
  @IsOptional() @IsIn(['asc', 'desc']) sort?: 'asc' | 'desc';
  @IsOptional() @IsString() search?: string;
  @IsOptional() @ToBool() @IsBoolean() simple?: boolean;
  @IsOptional() @ToBool() @IsBoolean() owned?: boolean;
  @IsOptional() @ToBool() @IsBoolean() membership?: boolean;
  @IsOptional() @ToBool() @IsBoolean() starred?: boolean;
  @IsOptional() @ToBool() @IsBoolean() statistics?: boolean;
  @IsOptional() @ToBool() @IsBoolean() with_issues_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() with_merge_requests_enabled?: boolean;
  @IsOptional() @IsObject() custom_attributes?: Record<string, unknown>;
}

/**
 * GitLab's PW parameters (all optional here; POST checks name/path itself). `description` and
 * `ci_config_path` take a JSON `null`, which clears them as in GitLab (Grape keeps a key sent as
 * null); any other null counts as not sent.
 */
export class ProjectWriteDto {
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() path?: string;
  @IsOptional() @IsString() default_branch?: string;
  @Nullable() @IsOptional() @IsString() description?: string | null;
  @IsOptional() @ToBool() @IsBoolean() issues_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() merge_requests_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() jobs_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() wiki_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() snippets_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() container_registry_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() shared_runners_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() public_jobs?: boolean;
  @IsOptional() @ToBool() @IsBoolean() only_allow_merge_if_pipeline_succeeds?: boolean;
  @IsOptional() @ToBool() @IsBoolean() only_allow_merge_if_all_discussions_are_resolved?: boolean;
  @IsOptional() @ToBool() @IsBoolean() resolve_outdated_diff_discussions?: boolean;
  @IsOptional() @ToBool() @IsBoolean() lfs_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() request_access_enabled?: boolean;
  @IsOptional() @ToBool() @IsBoolean() printing_merge_request_link_enabled?: boolean;
  @IsOptional() @IsIn(VISIBILITIES) visibility?: Visibility;
  @IsOptional() @IsString() import_url?: string;
  @IsOptional() @ToStringArray() @IsString({ each: true }) tag_list?: string[];
  @Nullable() @IsOptional() @IsString() ci_config_path?: string | null;
}

export class CreateProjectDto extends ProjectWriteDto {
  @IsOptional() @ToInt() @IsInt() namespace_id?: number;
}

export class StatisticsDto {
  @IsOptional() @ToBool() @IsBoolean() statistics?: boolean;
}

export class ProjectUsersDto extends PaginationDto {
  @IsOptional() @IsString() search?: string;
}

/** Grape only types `access_level`; the member model refuses levels outside 10..40 (400 on `access_level`). */
export class AddProjectMemberDto {
  @IsDefined() @ToInt() @IsInt() user_id: number;
  @IsDefined() @ToInt() @IsInt() access_level: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

export class UpdateProjectMemberDto {
  @IsDefined() @ToInt() @IsInt() access_level: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

export class ShareProjectDto {
  @IsDefined() @ToInt() @IsInt() group_id: number;
  // Decorators apply bottom-up: the type is checked first (`is invalid`), then the values.
  @IsDefined() @ToInt() @IsIn(PROJECT_ACCESS_LEVELS) @IsInt() group_access: number;
  @Nullable() @IsOptional() @IsString() expires_at?: string | null;
}

export class CustomAttributeDto {
  @IsDefined() @IsString() value: string;
}
