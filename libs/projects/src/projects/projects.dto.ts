import { VISIBILITIES, type Visibility } from '@app/groups';
import { Nullable, PaginationDto, ToBool, ToInt, ToStringArray } from '@app/platform';
import { Transform } from 'class-transformer';
import { IsBoolean, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString } from 'class-validator';
import { SETTINGS, type FeatureAccessLevel, type SettingParam } from './project-settings';

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
  /** Keyset positions (`pagination=keyset`): the next page of a descending list, of an ascending one. */
  @IsOptional() @ToInt() @IsInt() id_before?: number;
  @IsOptional() @ToInt() @IsInt() id_after?: number;
}

/**
 * GitLab's PW parameters (all optional here; POST checks name/path itself), one per stored setting.
 * The properties are declared for the types and the OpenAPI document (the swagger plugin reads the
 * declarations); their validation is the setting's (`decorateSettings` below, from
 * project-settings.ts). `description` and `ci_config_path` are `clearable`: a JSON `null`
 * clears them as in GitLab (Grape keeps a key sent as null); any other null counts as not sent.
 */
export class ProjectWriteDto {
  name?: string;
  path?: string;
  default_branch?: string;
  description?: string | null;
  issues_enabled?: boolean;
  merge_requests_enabled?: boolean;
  jobs_enabled?: boolean;
  wiki_enabled?: boolean;
  snippets_enabled?: boolean;
  container_registry_enabled?: boolean;
  shared_runners_enabled?: boolean;
  public_jobs?: boolean;
  only_allow_merge_if_pipeline_succeeds?: boolean;
  only_allow_merge_if_all_discussions_are_resolved?: boolean;
  resolve_outdated_diff_discussions?: boolean;
  lfs_enabled?: boolean;
  request_access_enabled?: boolean;
  printing_merge_request_link_enabled?: boolean;
  visibility?: Visibility;
  import_url?: string;
  tag_list?: string[];
  /** GitLab 14.0+: the same list as `tag_list`, which it replaces (it wins when both are sent). */
  topics?: string[];
  ci_config_path?: string | null;
  merge_method?: 'merge' | 'rebase_merge' | 'ff';
  squash_option?: 'never' | 'always' | 'default_on' | 'default_off';
  issues_access_level?: FeatureAccessLevel;
  repository_access_level?: FeatureAccessLevel;
  merge_requests_access_level?: FeatureAccessLevel;
  forking_access_level?: FeatureAccessLevel;
  wiki_access_level?: FeatureAccessLevel;
  builds_access_level?: FeatureAccessLevel;
  snippets_access_level?: FeatureAccessLevel;
  pages_access_level?: FeatureAccessLevel;
  operations_access_level?: FeatureAccessLevel;
  analytics_access_level?: FeatureAccessLevel;
  requirements_access_level?: FeatureAccessLevel;
  security_and_compliance_access_level?: FeatureAccessLevel;
  container_registry_access_level?: FeatureAccessLevel;
  packages_enabled?: boolean;
  remove_source_branch_after_merge?: boolean;
  allow_merge_on_skipped_pipeline?: boolean;
  autoclose_referenced_issues?: boolean;
  ci_forward_deployment_enabled?: boolean;
  merge_pipelines_enabled?: boolean;
  merge_trains_enabled?: boolean;
}

/** Every setting is a parameter of the DTO, and the DTO has no parameter that is not a setting. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const declared: Same<keyof ProjectWriteDto, SettingParam> = true;
void declared;

/**
 * Each setting's decorators, as they were written on the property (`@Nullable() @IsOptional() @IsString()`),
 * applied bottom-up as TypeScript applies them, in the table's order (class-validator's order of errors).
 */
function decorateSettings(dto: { prototype: object }): void {
  for (const s of SETTINGS) {
    const written: ((target: object, property: string) => void)[] = [];
    if (s.clearable) written.push(Nullable());
    written.push(IsOptional());
    if (s.type === 'boolean') written.push(ToBool(), IsBoolean());
    else if (s.type === 'enum') written.push(IsIn(s.values as unknown[]));
    else if (s.type === 'string-list') written.push(ToStringArray(), IsString({ each: true }));
    else written.push(IsString());
    for (const decorate of written.reverse()) {
      decorate(dto.prototype, s.wire);
      if (s.alias) decorate(dto.prototype, s.alias);
    }
  }
}
decorateSettings(ProjectWriteDto);

export class CreateProjectDto extends ProjectWriteDto {
  @IsOptional() @ToInt() @IsInt() namespace_id?: number;
  /** A first commit with README.md on the default branch (GitLab's CreateService; with `default_branch`, 14.10+). */
  @IsOptional() @ToBool() @IsBoolean() initialize_with_readme?: boolean;
}

export class StatisticsDto {
  @IsOptional() @ToBool() @IsBoolean() statistics?: boolean;
}

export class ProjectUsersDto extends PaginationDto {
  @IsOptional() @IsString() search?: string;
}

export class CustomAttributeDto {
  @IsDefined() @IsString() value: string;
}

/** `PUT /projects/:id/transfer`: the target namespace's id or full path (Terraform sends the id as a JSON number). */
export class TransferProjectDto {
  @IsDefined()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'number' ? String(value) : value))
  @IsString()
  namespace: string;
}
