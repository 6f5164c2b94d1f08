/**
 * What each route answers, for the OpenAPI document. The entity names are GitLab's shapes that the
 * contract tests hold the serializers to (test/contract/schemas/<kebab-name>.json, turned into schemas
 * by openapi.ts), plus the few LOCAL_SCHEMAS below that GitLab's contract files do not list. A route
 * that matches no rule fails the OpenAPI test, so a new route cannot go undescribed.
 */
export interface Answer {
  /** A schema in `components.schemas`; none for an empty answer (204). */
  schema?: string;
  /** Other shapes the same route answers for other callers (the document says `oneOf`). */
  oneOf?: string[];
  /** An array of `schema`, paginated with GitLab's headers. */
  list?: boolean;
  /** The success status, when the handler sets it itself (swagger sees only `@HttpCode`). */
  status?: string;
  media?: string;
  description?: string;
}

type Rule = [method: string, path: RegExp, answer: Answer];

const RAW: Answer = { schema: 'Raw', media: 'application/octet-stream', description: 'The file itself' };
const one = (schema: string, description?: string): Answer => ({ schema, description });
const list = (schema: string, description?: string): Answer => ({ schema, list: true, description });
const ANY = '*';

/** First match wins; paths are the document's (`{id}` for `:id`). */
const RULES: Rule[] = [
  ['GET', /^\/api\/v4\/version$/, one('Version')],
  ['GET', /^\/-\/health$/, one('Health')],
  ['GET', /^\/-\/readiness$/, one('Readiness', 'Ready (503 with the same body naming what failed)')],
  ['GET', /^\/-\/liveness$/, one('Liveness', 'Alive (503 after the event loop was blocked for more than 5 s)')],
  [
    'GET',
    /^\/-\/metrics$/,
    {
      schema: 'Metrics',
      media: 'text/plain',
      description: "Prometheus' text format (LODE_METRICS_ALLOW or administrators)",
    },
  ],
  ['GET', /^\/api\/v4\/sidekiq\/queue_metrics$/, one('SidekiqQueueMetrics', 'Each queue (administrators only)')],
  ['GET', /^\/api\/v4\/sidekiq\/process_metrics$/, one('SidekiqProcessMetrics', 'The processes running workers')],
  ['GET', /^\/api\/v4\/sidekiq\/job_stats$/, one('SidekiqJobStats', 'Totals of the jobs')],
  ['GET', /^\/api\/v4\/sidekiq\/compound_metrics$/, one('SidekiqCompoundMetrics', 'The three above in one')],
  ['GET', /^\/uploads\/-\/system\/(user|project)\/avatar\//, { ...RAW, media: 'image/*' }],
  ['GET', /^\/\{path\}\/uploads\//, RAW],

  // The Events API (GitLab 10.x): the caller's, a user's and a project's contribution events.
  [
    'GET',
    /^\/api\/v4\/(events|users\/\{id\}\/events|projects\/\{id\}\/events)$/,
    {
      ...list('Event', 'Contribution events, newest first (PushEvent, with push_data, for pushes)'),
      oneOf: ['PushEvent'],
    },
  ],

  // Users and the current user's credentials.
  // An administrator sees every user as UserAdmin (GitLab 10.8 lib/api/users.rb: `with: current_user&.admin? ?
  // Entities::UserWithAdmin : Entities::UserBasic`, and UserPublic for oneself): each shape is offered.
  ['GET', /^\/api\/v4\/users$/, { ...list('User', 'Users (UserAdmin for an administrator)'), oneOf: ['UserAdmin'] }],
  ['POST', /^\/api\/v4\/users$/, one('UserAdmin')],
  [
    'GET',
    /^\/api\/v4\/users\/\{id\}$/,
    { ...one('User', 'The user (UserAdmin for an administrator)'), oneOf: ['UserAdmin'] },
  ],
  ['PUT', /^\/api\/v4\/users\/\{id\}$/, one('UserAdmin')],
  ['POST', /^\/api\/v4\/users\/\{id\}\/block$/, one('Boolean', 'true, or null when blocked already')],
  ['POST', /^\/api\/v4\/users\/\{id\}\/(unblock|activate|ban|unban)$/, one('Boolean')],
  ['POST', /^\/api\/v4\/users\/\{id\}\/deactivate$/, one('Boolean', 'true, or null when deactivated already')],
  ['DELETE', /^\/api\/v4\/users\/\{id\}\/identities\/\{provider\}$/, {}],
  ['GET', /^\/api\/v4\/users\/\{user_id\}\/memberships$/, list('Membership')],
  [ANY, /^\/api\/v4\/(user|users\/\{id\})\/status$/, one('UserStatus')],
  [
    'GET',
    /^\/api\/v4\/keys(\/\{id\})?$/,
    one(
      'SshKeyWithUser',
      'The key with its user (by id, or by `fingerprint`); a deploy key found by fingerprint adds `deploy_keys_projects`',
    ),
  ],
  [
    'GET',
    /^\/api\/v4\/user$/,
    {
      ...one('UserPublic', 'The caller (UserAdmin, with `is_admin` and `note`, for an administrator)'),
      oneOf: ['UserAdmin'],
    },
  ],
  ['GET', /^\/api\/v4\/user\/activities$/, list('UserActivity')],
  ['GET', /\/keys$/, list('SshKey')],
  [ANY, /\/keys(\/\{key_id\})?$/, one('SshKey')],
  ['GET', /\/gpg_keys$/, list('GpgKey')],
  [ANY, /\/gpg_keys(\/\{key_id\})?$/, one('GpgKey')],
  ['GET', /\/emails$/, list('Email')],
  [ANY, /\/emails(\/\{email_id\})?$/, one('Email')],
  ['GET', /\/impersonation_tokens$/, list('ImpersonationToken')],
  ['POST', /\/impersonation_tokens$/, one('ImpersonationTokenCreated')],
  [ANY, /\/impersonation_tokens\/\{impersonation_token_id\}$/, one('ImpersonationToken')],
  ['POST', /\/personal_access_tokens(\/\{id\}|\/self)?(\/rotate)?$/, one('PersonalAccessTokenCreated')],
  ['GET', /^\/api\/v4\/personal_access_tokens$/, list('PersonalAccessToken')],
  ['DELETE', /^\/api\/v4\/personal_access_tokens\/(\{id\}|self)$/, {}],
  ['GET', /^\/api\/v4\/personal_access_tokens\/(\{id\}|self)$/, one('PersonalAccessToken')],
  ['GET', /\/custom_attributes$/, list('CustomAttribute')],
  [ANY, /\/custom_attributes\/\{key\}$/, one('CustomAttribute')],
  ['GET', /\/users\/\{user_id\}\/projects$/, list('Project')],

  // Groups and members.
  ['GET', /^\/api\/v4\/groups(\/\{id\}\/(subgroups|descendant_groups))?$/, list('Group')],
  ['GET', /^\/api\/v4\/namespaces$/, list('Namespace')],
  ['GET', /^\/api\/v4\/namespaces\/\{namespace\}\/exists$/, one('NamespaceExists')],
  ['GET', /^\/api\/v4\/namespaces\/\{id\}$/, one('Namespace')],
  ['GET', /^\/api\/v4\/metadata$/, one('Metadata')],
  ['GET', /^\/api\/v4\/application\/settings$/, one('ApplicationSettings')],
  ['POST', /^\/api\/v4\/groups$/, one('Group')],
  [ANY, /^\/api\/v4\/groups\/\{id\}(\/projects\/\{project_id\}|\/share|\/transfer)?$/, one('GroupDetail')],
  ['GET', /^\/api\/v4\/groups\/\{id\}\/projects$/, list('Project')],
  ['GET', /\/members(\/all)?$/, list('Member')],
  [ANY, /\/members(\/all)?(\/\{user_id\})?$/, one('Member')],

  // Projects.
  [
    'GET',
    /^\/api\/v4\/projects$/,
    { ...list('Project', 'Projects (ProjectSimple with `simple=true`)'), oneOf: ['ProjectSimple'] },
  ],
  ['GET', /^\/api\/v4\/projects\/\{id\}\/forks$/, list('Project')],
  ['GET', /^\/api\/v4\/projects\/\{id\}\/users$/, list('UserBasic')],
  ['GET', /^\/api\/v4\/projects\/\{id\}\/groups$/, list('PublicGroupDetails')],
  ['POST', /^\/api\/v4\/projects\/\{id\}\/share$/, one('ProjectShare')],
  ['POST', /^\/api\/v4\/projects\/\{id\}\/uploads$/, one('Upload')],
  ['POST', /^\/api\/v4\/projects\/\{id\}\/housekeeping$/, one('Boolean')],
  ['PUT', /^\/api\/v4\/projects\/\{id\}\/transfer$/, one('Project', 'The project in its new namespace')],
  ['GET', /^\/api\/v4\/projects\/\{id\}\/import$/, one('ProjectImportStatus')],
  ['GET', /^\/api\/v4\/projects\/\{id\}\/languages$/, one('Languages')],
  [
    'GET',
    /^\/api\/v4\/projects\/\{id\}\/storage$/,
    one('ProjectRepositoryStorage', 'Where the repository is kept (administrators only)'),
  ],
  [
    'GET',
    /^\/api\/v4\/projects\/\{id\}\/snapshot$/,
    { ...RAW, media: 'application/x-tar', description: 'A tar of the bare repository (administrators only)' },
  ],
  ['GET', /^\/api\/v4\/deploy_keys$/, list('DeployKey')],
  ['GET', /\/deploy_keys$/, list('DeployKeyProject')],
  ['POST', /\/deploy_keys\/\{key_id\}\/enable$/, one('DeployKey')],
  [ANY, /\/deploy_keys(\/\{key_id\})?$/, one('DeployKeyProject')],
  ['GET', /\/protected_branches$/, list('ProtectedBranch')],
  [ANY, /\/protected_branches(\/\{name\})?$/, one('ProtectedBranch')],
  ['GET', /\/protected_tags$/, list('ProtectedTag')],
  [ANY, /\/protected_tags(\/\{name\})?$/, one('ProtectedTag')],
  // GitLab's audit events (libs/audit): the instance's, a group's, a project's.
  ['GET', /\/audit_events$/, list('AuditEvent')],
  ['GET', /\/audit_events\/\{audit_event_id\}$/, one('AuditEvent')],
  ['GET', /\/hooks$/, list('ProjectHook')],
  ['GET', /\/hooks\/\{hook_id\}\/events$/, list('HookEvent')],
  ['POST', /\/hooks\/\{hook_id\}\/test\/\{trigger\}$/, one('Message', 'The receiver answered 2xx: `201 Created`')],
  ['POST', /\/hooks\/\{hook_id\}\/events\/\{hook_log_id\}\/resend$/, one('HookResend')],
  [ANY, /\/hooks(\/\{hook_id\})?$/, one('ProjectHook')],

  // Repositories.
  ['GET', /\/repository\/tree$/, list('TreeEntry')],
  ['GET', /\/repository\/blobs\/\{sha\}$/, one('Blob')],
  ['GET', /\/repository\/(blobs\/\{sha\}\/raw|archive(\.\{format\})?|files\/\{file_path\}\/raw)$/, RAW],
  ['GET', /\/repository\/compare$/, one('Compare')],
  ['GET', /\/repository\/contributors$/, list('Contributor')],
  ['GET', /\/repository\/branches$/, list('Branch')],
  [ANY, /\/repository\/branches\/\{branch\}(\/protect|\/unprotect)?$/, one('Branch')],
  ['POST', /\/repository\/branches$/, one('Branch')],
  ['DELETE', /\/repository\/merged_branches$/, one('Message', 'Accepted: merged branches are being deleted')],
  [
    'GET',
    /\/repository\/commits$/,
    { ...list('Commit', 'Commits (CommitWithStats with `with_stats=true`)'), oneOf: ['CommitWithStats'] },
  ],
  ['POST', /\/repository\/commits$/, one('CommitDetail')],
  ['GET', /\/repository\/commits\/\{sha\}$/, one('CommitDetail')],
  ['GET', /\/repository\/commits\/\{sha\}\/diff$/, list('Diff')],
  ['GET', /\/repository\/commits\/\{sha\}\/refs$/, list('CommitRef')],
  [
    'GET',
    /\/repository\/commits\/\{sha\}\/signature$/,
    one('CommitSignature', "The commit's GPG signature (404 when unsigned)"),
  ],
  ['POST', /\/repository\/commits\/\{sha\}\/cherry_pick$/, one('Commit')],
  ['POST', /\/repository\/commits\/\{sha\}\/revert$/, one('Commit')],
  ['GET', /\/repository\/merge_base$/, one('Commit')],
  ['HEAD', /\/repository\/files\/\{file_path\}$/, { description: "The file's metadata in X-Gitlab-* headers" }],
  ['GET', /\/repository\/files\/\{file_path\}$/, one('RepositoryFile')],
  ['GET', /\/repository\/files\/\{file_path\}\/blame$/, list('BlameRange')],
  [ANY, /\/repository\/files\/\{file_path\}$/, one('FileWrite')],
  ['GET', /\/repository\/tags$/, list('Tag')],
  [ANY, /\/repository\/tags(\/\{tag_name\})?$/, one('Tag')],
  [ANY, /\/repository\/tags\/\{tag_name\}\/release$/, one('Release')],
  ['GET', /\/releases$/, list('ProjectRelease')],
  [ANY, /\/releases(\/\{tag_name\})?$/, one('ProjectRelease')],
  ['GET', /\/releases\/\{tag_name\}\/assets\/links$/, list('ReleaseLink')],
  [ANY, /\/releases\/\{tag_name\}\/assets\/links(\/\{link_id\})?$/, one('ReleaseLink')],

  // What is left of a project's own routes: the project itself.
  [
    ANY,
    /^\/api\/v4\/projects(\/user\/\{user_id\}|\/\{id\}(\/(archive|unarchive|star|unstar|fork(\/\{forked_from_id\})?))?)?$/,
    one('Project'),
  ],
];

/** The answer of `method path`, or undefined when no rule describes the route. */
export function responseOf(method: string, path: string): Answer | undefined {
  for (const [m, re, answer] of RULES) if ((m === ANY || m === method) && re.test(path)) return answer;
  return undefined;
}

/** The shapes GitLab's contract files do not list, written from the serializers that produce them. */
export const LOCAL_SCHEMAS: Record<string, object> = {
  Raw: { type: 'string', format: 'binary' },
  ProjectImportStatus: {
    type: 'object',
    required: ['id', 'name', 'path', 'path_with_namespace', 'import_status', 'failed_relations'],
    properties: {
      id: { type: 'integer' },
      description: { type: ['string', 'null'] },
      name: { type: 'string' },
      name_with_namespace: { type: 'string' },
      path: { type: 'string' },
      path_with_namespace: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
      import_status: { type: 'string', enum: ['none', 'scheduled', 'started', 'finished', 'failed'] },
      import_type: { type: 'null' },
      correlation_id: { type: 'null' },
      failed_relations: { type: 'array', items: { type: 'object' } },
      import_error: { type: ['string', 'null'] },
      stats: { type: 'null' },
    },
  },
  Languages: {
    type: 'object',
    description: "Each language's share of the default branch's bytes, in percent, largest first",
    additionalProperties: { type: 'number' },
  },
  ProjectRepositoryStorage: {
    type: 'object',
    required: ['project_id', 'disk_path', 'created_at', 'repository_storage'],
    properties: {
      project_id: { type: 'integer' },
      disk_path: { type: 'string', description: "The repository's path in GitLab's hashed layout, without `.git`" },
      created_at: { type: 'string', format: 'date-time' },
      repository_storage: { type: 'string', enum: ['default'] },
    },
  },
  Boolean: { type: 'boolean' },
  Message: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
  Version: {
    type: 'object',
    required: ['version', 'revision'],
    properties: { version: { type: 'string' }, revision: { type: 'string' } },
  },
  Health: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } },
  Metadata: {
    type: 'object',
    required: ['version', 'revision', 'kas', 'enterprise'],
    properties: {
      version: { type: 'string' },
      revision: { type: 'string' },
      kas: {
        type: 'object',
        properties: {
          enabled: { type: 'boolean' },
          externalUrl: { type: ['string', 'null'] },
          version: { type: ['string', 'null'] },
        },
      },
      enterprise: { type: 'boolean' },
    },
  },
  ApplicationSettings: {
    type: 'object',
    required: ['id', 'default_branch_protection'],
    description: "The instance's settings, read from Lode's configuration (README lists which)",
    // Every field apps/lode/src/application-settings.controller.ts answers (GitLab 10.x ApplicationSetting).
    properties: {
      id: { type: 'integer' },
      default_branch_protection: { type: 'integer' },
      gravatar_enabled: { type: 'boolean' },
      max_attachment_size: { type: 'integer', description: 'MiB (LODE_MAX_UPLOAD_BYTES)' },
      allow_local_requests_from_web_hooks_and_services: { type: 'boolean' },
      allow_local_requests_from_system_hooks: { type: 'boolean' },
      throttle_authenticated_api_enabled: { type: 'boolean' },
      throttle_authenticated_api_requests_per_period: { type: 'integer' },
      throttle_authenticated_api_period_in_seconds: { type: 'integer' },
      throttle_unauthenticated_enabled: { type: 'boolean' },
      throttle_unauthenticated_requests_per_period: { type: 'integer' },
      throttle_unauthenticated_period_in_seconds: { type: 'integer' },
      default_project_visibility: { type: 'string', enum: ['private', 'internal', 'public'] },
      default_group_visibility: { type: 'string', enum: ['private', 'internal', 'public'] },
      default_snippet_visibility: { type: 'string', enum: ['private', 'internal', 'public'] },
      restricted_visibility_levels: { type: 'array', items: { type: 'string' } },
      default_projects_limit: { type: 'integer' },
      can_create_group: { type: 'boolean' },
      user_default_external: { type: 'boolean' },
      signup_enabled: { type: 'boolean' },
      password_authentication_enabled_for_web: { type: 'boolean' },
      password_authentication_enabled_for_git: { type: 'boolean' },
      import_sources: { type: 'array', items: { type: 'string' } },
      deactivate_dormant_users: { type: 'boolean' },
      require_two_factor_authentication: { type: 'boolean' },
      two_factor_grace_period: { type: 'integer' },
      session_expire_delay: { type: 'integer' },
      shared_runners_enabled: { type: 'boolean' },
      auto_devops_enabled: { type: 'boolean' },
      container_registry_token_expire_delay: { type: 'integer' },
      repository_storages: { type: 'array', items: { type: 'string' } },
      home_page_url: { type: ['string', 'null'] },
      after_sign_out_path: { type: ['string', 'null'] },
      terms: { type: ['string', 'null'] },
      enforce_terms: { type: 'boolean' },
      housekeeping_enabled: { type: 'boolean' },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
    },
    additionalProperties: false,
  },
  SshKeyWithUser: {
    type: 'object',
    required: ['id', 'title', 'key', 'created_at', 'expires_at', 'user'],
    properties: {
      id: { type: 'integer' },
      title: { type: 'string' },
      key: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
      expires_at: { type: ['string', 'null'], format: 'date-time' },
      // A deploy key's user is the one who added it: null once that user is gone for good.
      user: { oneOf: [{ $ref: '#/components/schemas/UserPublic' }, { type: 'null' }] },
      deploy_keys_projects: {
        type: 'array',
        description: "A deploy key's links to projects (by fingerprint only; GitLab 12.7's DeployKeyWithUser)",
        items: {
          type: 'object',
          required: ['deploy_key_id', 'project_id', 'created_at', 'updated_at', 'can_push'],
          properties: {
            deploy_key_id: { type: 'integer' },
            project_id: { type: 'integer' },
            created_at: { type: 'string', format: 'date-time' },
            updated_at: { type: 'string', format: 'date-time' },
            can_push: { type: 'boolean' },
          },
        },
      },
    },
  },
  Membership: {
    type: 'object',
    required: ['source_id', 'source_name', 'source_type', 'access_level'],
    properties: {
      source_id: { type: 'integer' },
      source_name: { type: 'string' },
      source_type: { type: 'string', enum: ['Project', 'Namespace'] },
      access_level: { type: 'integer' },
    },
  },
  UserStatus: {
    type: 'object',
    required: ['emoji', 'message', 'availability', 'message_html', 'clear_status_at'],
    properties: {
      emoji: { type: ['string', 'null'] },
      message: { type: ['string', 'null'] },
      availability: { type: ['string', 'null'], enum: ['not_set', 'busy', null] },
      message_html: { type: ['string', 'null'] },
      clear_status_at: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  Namespace: {
    type: 'object',
    required: ['id', 'name', 'path', 'kind', 'full_path', 'parent_id', 'avatar_url', 'web_url'],
    properties: {
      id: { type: 'integer' },
      name: { type: 'string' },
      path: { type: 'string' },
      kind: { type: 'string', enum: ['user', 'group'] },
      full_path: { type: 'string' },
      parent_id: { type: ['integer', 'null'] },
      avatar_url: { type: ['string', 'null'] },
      web_url: { type: 'string' },
      members_count_with_descendants: { type: 'integer', description: 'Owners and administrators only' },
    },
  },
  NamespaceExists: {
    type: 'object',
    required: ['exists', 'suggests'],
    properties: { exists: { type: 'boolean' }, suggests: { type: 'array', items: { type: 'string' } } },
  },
  Liveness: {
    type: 'object',
    properties: { status: { type: 'string', enum: ['ok', 'failed'] }, message: { type: 'string' } },
  },
  Metrics: { type: 'string', description: "Prometheus' text exposition format, version 0.0.4" },
  Readiness: {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ok', 'failed'] },
      checks: { type: 'object', additionalProperties: { type: 'object' } },
    },
  },
  SidekiqQueueMetrics: {
    type: 'object',
    required: ['queues'],
    properties: { queues: { $ref: '#/components/schemas/SidekiqQueues' } },
  },
  SidekiqQueues: {
    type: 'object',
    description: 'Each queue by its name',
    additionalProperties: {
      type: 'object',
      required: ['backlog', 'latency'],
      properties: {
        backlog: { type: 'integer', description: 'Waiting, prioritized and delayed jobs' },
        latency: { type: 'integer', description: 'Seconds the oldest waiting job has been ready' },
      },
    },
  },
  SidekiqProcessMetrics: {
    type: 'object',
    required: ['processes'],
    properties: { processes: { $ref: '#/components/schemas/SidekiqProcesses' } },
  },
  SidekiqProcesses: {
    type: 'array',
    items: {
      type: 'object',
      required: ['hostname', 'pid', 'tag', 'started_at', 'queues', 'labels', 'concurrency', 'busy'],
      properties: {
        hostname: { type: 'string' },
        pid: { type: 'integer' },
        tag: { type: 'string' },
        started_at: { type: 'string', format: 'date-time' },
        queues: { type: 'array', items: { type: 'string' } },
        labels: { type: 'array', items: { type: 'string' } },
        concurrency: { type: 'integer' },
        busy: { type: 'integer' },
      },
    },
  },
  SidekiqJobStats: {
    type: 'object',
    required: ['jobs'],
    properties: { jobs: { $ref: '#/components/schemas/SidekiqJobs' } },
  },
  SidekiqJobs: {
    type: 'object',
    required: ['processed', 'failed', 'enqueued', 'dead'],
    properties: {
      processed: { type: 'integer' },
      failed: { type: 'integer' },
      enqueued: { type: 'integer' },
      dead: { type: 'integer' },
    },
  },
  SidekiqCompoundMetrics: {
    type: 'object',
    required: ['queues', 'processes', 'jobs'],
    properties: {
      queues: { $ref: '#/components/schemas/SidekiqQueues' },
      processes: { $ref: '#/components/schemas/SidekiqProcesses' },
      jobs: { $ref: '#/components/schemas/SidekiqJobs' },
    },
  },
  Upload: {
    type: 'object',
    required: ['alt', 'url', 'markdown'],
    properties: { alt: { type: 'string' }, url: { type: 'string' }, markdown: { type: 'string' } },
  },
  HookEvent: {
    type: 'object',
    description: "A recorded delivery of the hook (GitLab 17.x's WebHookLog, with Lode's fields beside)",
    properties: {
      id: { type: 'integer' },
      url: { type: 'string' },
      trigger: { type: 'string', enum: ['push_hooks', 'tag_push_hooks'] },
      request_headers: { type: 'object' },
      request_data: { type: ['object', 'null'] },
      response_headers: { type: 'object' },
      response_body: { type: 'string' },
      execution_duration: { type: 'number' },
      response_status: { type: ['integer', 'string', 'null'] },
      created_at: { type: 'string', format: 'date-time' },
    },
  },
  HookResend: {
    type: 'object',
    required: ['response_status'],
    properties: { response_status: { type: 'integer' } },
  },
  TreeEntry: {
    type: 'object',
    required: ['id', 'name', 'type', 'path', 'mode'],
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      type: { type: 'string', enum: ['tree', 'blob', 'commit'] },
      path: { type: 'string' },
      mode: { type: 'string' },
    },
  },
  Blob: {
    type: 'object',
    required: ['size', 'encoding', 'content', 'sha'],
    properties: {
      size: { type: 'integer' },
      encoding: { type: 'string', enum: ['base64'] },
      content: { type: 'string' },
      sha: { type: 'string' },
    },
  },
  Compare: {
    type: 'object',
    required: ['commit', 'commits', 'diffs', 'compare_timeout', 'compare_same_ref'],
    properties: {
      commit: { oneOf: [{ $ref: '#/components/schemas/Commit' }, { type: 'null' }] },
      commits: { type: 'array', items: { $ref: '#/components/schemas/Commit' } },
      diffs: { type: 'array', items: { $ref: '#/components/schemas/Diff' } },
      compare_timeout: { type: 'boolean' },
      compare_same_ref: { type: 'boolean' },
    },
  },
  Contributor: {
    type: 'object',
    required: ['name', 'email', 'commits', 'additions', 'deletions'],
    properties: {
      name: { type: 'string' },
      email: { type: 'string' },
      commits: { type: 'integer' },
      additions: { type: 'integer' },
      deletions: { type: 'integer' },
    },
  },
  FileWrite: {
    type: 'object',
    required: ['file_path', 'branch'],
    properties: { file_path: { type: 'string' }, branch: { type: 'string' } },
  },
};

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const closed = (properties: Record<string, object>, required = Object.keys(properties)) => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties,
});
const integer = { type: 'integer' };
const string = { type: 'string' };
const access = {
  oneOf: [closed({ access_level: integer, notification_level: integer }), { type: 'null' }],
};
/** GitLab 10.x lib/api/entities.rb Project: `namespace` (NamespaceBasic), `_links`, `owner`, `statistics`. */
const PROJECT_NESTED: Record<string, object> = {
  namespace: closed({
    id: integer,
    name: string,
    path: string,
    kind: { type: 'string', enum: ['user', 'group'] },
    full_path: string,
    parent_id: { type: ['integer', 'null'] },
  }),
  // Only the links of the features the project has on (`issues` with issues enabled...).
  _links: closed(
    {
      self: string,
      issues: string,
      merge_requests: string,
      repo_branches: string,
      labels: string,
      events: string,
      members: string,
    },
    ['self', 'repo_branches', 'labels', 'events', 'members'],
  ),
  owner: closed({ id: integer, name: string, created_at: { type: 'string', format: 'date-time' } }),
  statistics: closed({
    commit_count: integer,
    storage_size: integer,
    repository_size: integer,
    lfs_objects_size: integer,
    job_artifacts_size: integer,
  }),
};
const accessLevels = { type: 'array', items: schemaRef('ProtectedRefAccess') };
const date = { type: 'string', format: 'date-time' };
/** A commit embedded in a branch, a tag or a release (GitLab 10.x RepoCommit; `web_url` from 12.x on some). */
const EMBEDDED_COMMIT = closed(
  {
    id: string,
    short_id: string,
    title: string,
    created_at: date,
    parent_ids: { type: 'array', items: string },
    message: string,
    author_name: string,
    author_email: string,
    authored_date: date,
    committer_name: string,
    committer_email: string,
    committed_date: date,
    web_url: string,
  },
  ['id', 'parent_ids', 'message', 'author_name', 'author_email', 'authored_date', 'committed_date'],
);

/**
 * What the contract files type only as `object` or `array`, described key by key: openapi.ts puts
 * these in place of the entity's property (keeping `null` where the contract allows it).
 */
export const NESTED_PROPERTIES: Record<string, Record<string, object>> = {
  Project: { ...PROJECT_NESTED, permissions: closed({ project_access: access, group_access: access }) },
  ProjectInGroup: PROJECT_NESTED,
  Event: { author: schemaRef('UserBasic') },
  PushEvent: {
    author: schemaRef('UserBasic'),
    // GitLab 10.x lib/api/entities.rb PushEventPayload.
    push_data: closed({
      commit_count: integer,
      action: { type: 'string', enum: ['pushed', 'created', 'removed'] },
      ref_type: { type: 'string', enum: ['branch', 'tag'] },
      commit_from: { type: ['string', 'null'] },
      commit_to: { type: ['string', 'null'] },
      ref: string,
      commit_title: { type: ['string', 'null'] },
    }),
  },
  ProjectRelease: {
    author: schemaRef('UserBasic'),
    commit: EMBEDDED_COMMIT,
    assets: closed({
      count: integer,
      sources: { type: 'array', items: closed({ format: string, url: string }) },
      links: { type: 'array', items: schemaRef('ReleaseLink') },
    }),
    _links: closed({ self: string, edit_url: string }, ['self']),
  },
  Branch: { commit: EMBEDDED_COMMIT },
  Tag: { commit: EMBEDDED_COMMIT, release: closed({ tag_name: string, description: { type: ['string', 'null'] } }) },
  GroupDetail: {
    projects: { type: 'array', items: schemaRef('ProjectInGroup') },
    shared_projects: { type: 'array', items: schemaRef('ProjectInGroup') },
  },
  CommitWithStats: { stats: schemaRef('CommitStats') },
  CommitDetail: { stats: schemaRef('CommitStats') },
  ProtectedBranch: { push_access_levels: accessLevels, merge_access_levels: accessLevels },
  ProtectedTag: { create_access_levels: accessLevels },
};
