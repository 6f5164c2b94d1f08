import { BadParameter, validateParams } from '@app/platform';
import { FEATURE_DEFAULTS } from './project';
import { PROJECT_SETTINGS, SETTINGS, settingDefault, UPDATE_AT_LEAST_ONE_OF, forkedSettings } from './project-settings';
import type { ProjectRow } from './project.queries';
import { newProjectSettings, projectChanges } from './project-setting-params';
import { serializeProject, serializeProjectSimple } from './project.serializer';
import { CreateProjectDto, ProjectWriteDto } from './projects.dto';

/* The table of project-settings.ts against what reads it. */

const row = (): ProjectRow =>
  ({
    ...Object.fromEntries(SETTINGS.map((s) => [s.wire, settingDefault(s, { name: 'Foo' })])),
    id: 1,
    namespace_id: 2,
    name: 'Foo',
    path: 'foo',
    description: 'd',
    default_branch: 'main',
    visibility: 'internal',
    tag_list: ['a'],
    ci_config_path: 'ci.yml',
    import_url: 'https://example.com/x.git',
    ...Object.fromEntries(SETTINGS.filter((s) => s.feature).map((s) => [s.wire, true])),
    archived: false,
    creator_id: 3,
    import_status: 'none',
    import_error: null,
    avatar: null,
    forked_from_id: null,
    star_count: 0,
    forks_count: 0,
    runners_token: 'secret',
    repository_size: '0',
    commit_count: 0,
    created_at: new Date(0),
    updated_at: new Date(0),
    last_activity_at: new Date(0),
    ns_name: 'ns',
    ns_path: 'ns',
    ns_kind: 'group',
    ns_full_path: 'ns',
    ns_full_name: 'ns',
    ns_parent_id: null,
    ns_visibility: 'public',
    owner_id: null,
    owner_name: null,
    owner_created_at: null,
    project_access: null,
    group_access: null,
    access: 0,
    shared_with: [],
  }) as unknown as ProjectRow;

describe('project settings, one entry each', () => {
  it('wire names and keys are unique', () => {
    expect(new Set(SETTINGS.map((s) => s.wire)).size).toBe(SETTINGS.length);
    expect(new Set(SETTINGS.map((s) => s.key)).size).toBe(SETTINGS.length);
  });

  it('the serializer shows each setting where the table says, under its name', () => {
    const ctx = { externalUrl: 'http://lode', sshCloneBase: 'git@lode:' };
    const basic = serializeProjectSimple(row(), ctx) as Record<string, unknown>;
    const full = serializeProject(row(), ctx);
    for (const s of SETTINGS) {
      const name = s.shownAs ?? s.wire;
      expect([s.wire, name in basic]).toEqual([s.wire, s.shown === 'basic']);
      expect([s.wire, name in full]).toEqual([s.wire, s.shown !== 'no']);
      if (s.shown !== 'no') expect([s.wire, full[name]]).toEqual([s.wire, row()[s.wire]]);
    }
  });

  it("a POST's defaults are the table's", () => {
    const p = Object.assign(new ProjectWriteDto(), { name: 'Café Bar' });
    expect(newProjectSettings(p)).toEqual({
      name: 'Café Bar',
      path: 'cafe-bar',
      description: null,
      visibility: 'private',
      defaultBranch: null,
      tagList: [],
      ciConfigPath: null,
      importUrl: null,
      mergeMethod: 'merge',
      squashOption: 'default_off',
      issuesAccessLevel: 'enabled',
      repositoryAccessLevel: 'enabled',
      mergeRequestsAccessLevel: 'enabled',
      forkingAccessLevel: 'enabled',
      wikiAccessLevel: 'enabled',
      buildsAccessLevel: 'enabled',
      snippetsAccessLevel: 'enabled',
      pagesAccessLevel: 'private',
      operationsAccessLevel: 'enabled',
      analyticsAccessLevel: 'enabled',
      requirementsAccessLevel: 'enabled',
      securityAndComplianceAccessLevel: 'private',
      containerRegistryAccessLevel: 'enabled',
      packagesEnabled: true,
      removeSourceBranchAfterMerge: true,
      allowMergeOnSkippedPipeline: false,
      autocloseReferencedIssues: true,
      ciForwardDeploymentEnabled: true,
      mergePipelinesEnabled: false,
      mergeTrainsEnabled: false,
      features: FEATURE_DEFAULTS,
    });
    expect(newProjectSettings(Object.assign(new ProjectWriteDto(), { path: 'p' }))).toMatchObject({
      name: 'p',
      path: 'p',
    });
    expect(() => newProjectSettings(new ProjectWriteDto())).toThrow(
      new BadParameter('name, path are missing, at least one parameter must be provided'),
    );
  });

  it('a PUT takes what was sent, switches under features; nothing sent is a 400 naming GitLab’s list', () => {
    const p = Object.assign(new ProjectWriteDto(), { wiki_enabled: false, ci_config_path: null, tag_list: ['x'] });
    expect(projectChanges(p)).toEqual({
      tagList: ['x'],
      ciConfigPath: null,
      wikiAccessLevel: 'disabled',
      features: { wikiEnabled: false },
    });
    expect(() => projectChanges(new ProjectWriteDto())).toThrow(
      new BadParameter(`${UPDATE_AT_LEAST_ONE_OF.join(', ')} are missing, at least one parameter must be provided`),
    );
    expect(projectChanges(new ProjectWriteDto(), true)).toEqual({});
    // `import_url` counts as a parameter sent, though GitLab's list does not name it.
    expect(
      SETTINGS.map((s) => s.wire).filter((w) => !(UPDATE_AT_LEAST_ONE_OF as readonly string[]).includes(w)),
    ).toEqual(['import_url']);
  });

  it('`topics` is `tag_list` by its GitLab 14 name, and wins when both are sent', () => {
    const both = Object.assign(new ProjectWriteDto(), { topics: ['t'], tag_list: ['x'] });
    expect(projectChanges(both)).toEqual({ tagList: ['t'] });
    expect(newProjectSettings(Object.assign(new ProjectWriteDto(), { name: 'a', topics: ['b'] })).tagList).toEqual([
      'b',
    ]);
  });

  it('an access level and its switch agree, the level winning when both are sent', () => {
    const put = (p: object) => projectChanges(Object.assign(new ProjectWriteDto(), p));
    expect(put({ issues_enabled: false })).toEqual({
      issuesAccessLevel: 'disabled',
      features: { issuesEnabled: false },
    });
    expect(put({ wiki_access_level: 'private' })).toEqual({
      wikiAccessLevel: 'private',
      features: { wikiEnabled: true },
    });
    expect(put({ jobs_enabled: true, builds_access_level: 'disabled' })).toEqual({
      buildsAccessLevel: 'disabled',
      features: { jobsEnabled: false },
    });
    const post = newProjectSettings(
      Object.assign(new ProjectWriteDto(), {
        name: 'a',
        snippets_enabled: false,
        merge_requests_access_level: 'disabled',
      }),
    );
    expect(post).toMatchObject({ snippetsAccessLevel: 'disabled', mergeRequestsAccessLevel: 'disabled' });
    expect(post.features).toMatchObject({ snippetsEnabled: false, mergeRequestsEnabled: false });
    expect(
      newProjectSettings(Object.assign(new ProjectWriteDto(), { name: 'a', visibility: 'public' })).pagesAccessLevel,
    ).toBe('enabled');
  });

  it('the DTO validates each setting by its type, in the parameters’ order', async () => {
    const refused = (params: object) =>
      validateParams(CreateProjectDto, params).then(
        () => undefined,
        (e: BadParameter) => e.message,
      );
    expect(
      await refused({
        ci_config_path: 1,
        tag_list: [1],
        visibility: 'secret',
        lfs_enabled: 'maybe',
        issues_enabled: 'x',
        description: 2,
        name: 3,
      }),
    ).toMatch(
      'name is invalid, description is invalid, issues_enabled is invalid, lfs_enabled is invalid, visibility does not have a valid value, tag_list is invalid, ci_config_path is invalid',
    );
    const ok = await validateParams(CreateProjectDto, {
      issues_enabled: 'false',
      tag_list: 'a,b',
      description: null,
      import_url: null,
    });
    expect(ok).toMatchObject({ issues_enabled: false, tag_list: ['a', 'b'], description: null });
    expect(ok.import_url).toBeUndefined(); // a null counts as not sent, but where the setting is clearable
  });

  it('a fork copies what the table says and resets the rest', () => {
    const settings = forkedSettings(row());
    expect(settings.importUrl).toBeNull();
    expect(settings).toMatchObject({ name: 'Foo', tagList: ['a'], ciConfigPath: 'ci.yml', visibility: 'internal' });
    expect(Object.keys(settings.features)).toHaveLength(PROJECT_SETTINGS.filter((s) => 'feature' in s).length);
  });
});
