import { AdminOnly, LodeConfig } from '@app/platform';
import { Controller, Get } from '@nestjs/common';

/** When Lode's instance settings began: it keeps none in the database, so they never change at run time. */
const SETTINGS_SINCE = '2025-01-01T00:00:00.000Z';

/**
 * GitLab's `GET /application/settings` (administrators only: 403 for others, 401 without a token),
 * read-only. Lode keeps no instance settings table: each field is what Lode really does, from its
 * configuration (`LODE_*`) or from a context's fixed behaviour; GitLab's default where Lode has no such
 * setting. README's "Users, keys, namespaces and the instance" lists which is which. The Terraform
 * provider reads `default_branch_protection` when it creates a project in a user's namespace, to know
 * whether to wait for the default branch's protection: it must be what a first push really does.
 */
@Controller('application/settings')
export class ApplicationSettingsController {
  constructor(private readonly config: LodeConfig) {}

  @Get()
  @AdminOnly()
  settings() {
    const c = this.config;
    const throttled = (limit: number) => ({ enabled: limit > 0, requests: limit, period: c.rateLimitPeriod });
    const authenticated = throttled(c.rateLimitAuthenticated);
    const unauthenticated = throttled(c.rateLimitUnauthenticated);
    return {
      id: 1,
      // From Lode's configuration.
      default_branch_protection: c.defaultBranchProtection,
      gravatar_enabled: c.gravatar,
      max_attachment_size: Math.floor(c.maxUploadBytes / (1024 * 1024)),
      allow_local_requests_from_web_hooks_and_services: c.allowLocalWebhooks,
      allow_local_requests_from_system_hooks: c.allowLocalWebhooks,
      throttle_authenticated_api_enabled: authenticated.enabled,
      throttle_authenticated_api_requests_per_period: authenticated.requests,
      throttle_authenticated_api_period_in_seconds: authenticated.period,
      throttle_unauthenticated_enabled: unauthenticated.enabled,
      throttle_unauthenticated_requests_per_period: unauthenticated.requests,
      throttle_unauthenticated_period_in_seconds: unauthenticated.period,
      // Lode's fixed behaviour: new projects and groups are private unless asked otherwise, a new
      // user's defaults are the users context's, nobody signs up, and git over HTTP takes tokens only.
      default_project_visibility: 'private',
      default_group_visibility: 'private',
      default_snippet_visibility: 'private',
      restricted_visibility_levels: [],
      default_projects_limit: 100000,
      can_create_group: true,
      user_default_external: false,
      signup_enabled: false,
      password_authentication_enabled_for_web: false,
      password_authentication_enabled_for_git: false,
      import_sources: [],
      deactivate_dormant_users: false,
      // GitLab's defaults for what Lode does not have.
      require_two_factor_authentication: false,
      two_factor_grace_period: 48,
      session_expire_delay: 10080,
      shared_runners_enabled: false,
      auto_devops_enabled: false,
      container_registry_token_expire_delay: 5,
      repository_storages: ['default'],
      home_page_url: null,
      after_sign_out_path: null,
      terms: null,
      enforce_terms: false,
      housekeeping_enabled: true,
      created_at: SETTINGS_SINCE,
      updated_at: SETTINGS_SINCE,
    };
  }
}
