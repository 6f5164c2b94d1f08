import { addGroupMember, client, createGroup } from '../support/groups';
import { createUser, type SeededUser } from '../support/seed';
import { eventually, startTestApp, type TestApp } from '../support/test-app';

/**
 * The requests Terraform's `gitlab_project` (gitlabhq/terraform-provider-gitlab, resource_gitlab_project.go)
 * makes, in its order, with the bodies it sends: create (its schema defaults always sent, then the
 * post-create PUT), read, update (`name` always, plus what changed), read again; the fork
 * (`forked_from_project_id`: POST .../fork, poll GET .../import until `finished`, PUT the rest) and the
 * transfer (`namespace_id` changed). Each read must give back what the configuration holds, or the
 * next plan shows drift; applying the same configuration twice must change nothing.
 */
/** The Project entity's fields the provider's read takes (the rest unknown). */
type ProjectBody = {
  id: number;
  namespace: { id: number };
  topics: string[];
  tag_list: string[];
  forked_from_project: { id: number };
} & Record<string, unknown>;

describe('Terraform gitlab_project, as the provider walks it', () => {
  let t: TestApp;
  let user: SeededUser;
  const as = (token?: string) => client(t, token);

  /** What the provider sends on every create, from its schema's defaults (the brief's §1.5). */
  const CREATE_DEFAULTS = {
    request_access_enabled: true,
    issues_enabled: true,
    merge_requests_enabled: true,
    jobs_enabled: true,
    approvals_before_merge: 0,
    wiki_enabled: true,
    snippets_enabled: true,
    container_registry_enabled: true,
    lfs_enabled: true,
    visibility: 'private',
    merge_method: 'merge',
    only_allow_merge_if_pipeline_succeeds: false,
    only_allow_merge_if_all_discussions_are_resolved: false,
    allow_merge_on_skipped_pipeline: false,
    shared_runners_enabled: true,
    remove_source_branch_after_merge: true,
    packages_enabled: true,
    printing_merge_request_link_enabled: true,
    mirror: false,
    mirror_trigger_builds: false,
    ci_forward_deployment_enabled: true,
    pages_access_level: 'private',
  };

  /** The provider's read (resourceGitlabProjectSetToState): the state each attribute takes from GET /projects/:id. */
  function state(p: ProjectBody) {
    return {
      name: p.name,
      path: p.path,
      namespace_id: p.namespace.id,
      description: p.description,
      default_branch: p.default_branch,
      request_access_enabled: p.request_access_enabled,
      issues_enabled: p.issues_enabled,
      merge_requests_enabled: p.merge_requests_enabled,
      pipelines_enabled: p.jobs_enabled,
      wiki_enabled: p.wiki_enabled,
      snippets_enabled: p.snippets_enabled,
      container_registry_enabled: p.container_registry_enabled,
      lfs_enabled: p.lfs_enabled,
      visibility_level: p.visibility,
      merge_method: p.merge_method,
      only_allow_merge_if_pipeline_succeeds: p.only_allow_merge_if_pipeline_succeeds,
      only_allow_merge_if_all_discussions_are_resolved: p.only_allow_merge_if_all_discussions_are_resolved,
      allow_merge_on_skipped_pipeline: p.allow_merge_on_skipped_pipeline,
      shared_runners_enabled: p.shared_runners_enabled,
      remove_source_branch_after_merge: p.remove_source_branch_after_merge,
      packages_enabled: p.packages_enabled,
      printing_merge_request_link_enabled: p.printing_merge_requests_link_enabled,
      ci_forward_deployment_enabled: p.ci_forward_deployment_enabled,
      merge_pipelines_enabled: p.merge_pipelines_enabled,
      merge_trains_enabled: p.merge_trains_enabled,
      pages_access_level: p.pages_access_level,
      issues_access_level: p.issues_access_level,
      repository_access_level: p.repository_access_level,
      merge_requests_access_level: p.merge_requests_access_level,
      builds_access_level: p.builds_access_level,
      wiki_access_level: p.wiki_access_level,
      snippets_access_level: p.snippets_access_level,
      squash_option: p.squash_option,
      topics: [...p.topics].sort(),
      tags: [...p.tag_list].sort(),
    };
  }

  /** What a configuration with these attributes expects in state (the schema's defaults otherwise). */
  const expected = (config: Record<string, unknown>) => ({
    request_access_enabled: true,
    issues_enabled: true,
    merge_requests_enabled: true,
    pipelines_enabled: true,
    wiki_enabled: true,
    snippets_enabled: true,
    container_registry_enabled: true,
    lfs_enabled: true,
    visibility_level: 'private',
    merge_method: 'merge',
    only_allow_merge_if_pipeline_succeeds: false,
    only_allow_merge_if_all_discussions_are_resolved: false,
    allow_merge_on_skipped_pipeline: false,
    shared_runners_enabled: true,
    remove_source_branch_after_merge: true,
    packages_enabled: true,
    printing_merge_request_link_enabled: true,
    ci_forward_deployment_enabled: true,
    merge_pipelines_enabled: false,
    merge_trains_enabled: false,
    pages_access_level: 'private',
    ...config,
  });

  /** The provider's Read: GET /projects/:id, then the push rules (a 404 is "none"). */
  async function read(token: string, id: number) {
    const res = await as(token).get(`/projects/${id}`);
    expect(res.status).toBe(200);
    const pushRule = await as(token).get(`/projects/${id}/push_rule`);
    expect([200, 404]).toContain(pushRule.status);
    return res.body as ProjectBody;
  }

  /** The provider's Create for a configuration (the POST's body), then its Read. */
  async function create(token: string, config: Record<string, unknown>) {
    const version = await as(token).get('/version');
    expect(version.body.version).toMatch(/^\d+\.\d+\.\d+/);
    const res = await as(token)
      .post('/projects')
      .send({ ...CREATE_DEFAULTS, ...config });
    expect(res.status).toBe(201);
    // Only a create answering another status than `none` is polled (GET .../import).
    expect(res.body.import_status).toBe('none');
    const id = res.body.id as number;
    await read(token, id);
    // The post-create PUT of the options the POST cannot carry.
    const put = await as(token)
      .put(`/projects/${id}`)
      .send({ merge_pipelines_enabled: false, merge_trains_enabled: false });
    expect(put.status).toBe(200);
    return read(token, id);
  }

  /** The provider's Update: `name` always (GitLab's at_least_one_of), plus the changed attributes; then Read. */
  async function update(token: string, id: number, name: string, changed: Record<string, unknown>) {
    const res = await as(token)
      .put(`/projects/${id}`)
      .send({ name, ...changed });
    expect(res.status).toBe(200);
    return read(token, id);
  }

  beforeAll(async () => {
    t = await startTestApp();
    user = await createUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('create with initialize_with_readme and default_branch, read, update topics and merge_method: no drift, twice', async () => {
    const config = {
      name: 'tf-project',
      description: 'Managed by Terraform',
      initialize_with_readme: true,
      default_branch: 'main',
    };
    const created = await create(user.token, config);
    expect(created.default_branch).toBe('main');
    const { initialize_with_readme: _readme, ...attributes } = config;
    void _readme;
    expect(state(created)).toMatchObject(expected({ ...attributes, path: 'tf-project' }));
    // The provider waits for the default branch's protection (a 404 would end the wait).
    const branch = await as(user.token).get(`/projects/${created.id}/repository/branches/main`);
    expect([branch.status, branch.body.protected]).toEqual([200, true]);

    const changes = { topics: ['infra', 'terraform'], merge_method: 'ff', squash_option: 'default_on' };
    const updated = await update(user.token, created.id, config.name, changes);
    expect(state(updated)).toMatchObject(
      expected({ ...attributes, merge_method: 'ff', squash_option: 'default_on', topics: ['infra', 'terraform'] }),
    );
    expect(state(updated).tags).toEqual(['infra', 'terraform']);

    // Applying the same configuration again changes nothing the provider reads, nor the stream.
    const events = async () =>
      Number(
        (await t.db.query(`select count(*) as n from events where stream_id = $1`, [`project-${created.id}`]))[0].n,
      );
    const before = await events();
    const again = await update(user.token, created.id, config.name, changes);
    expect(again).toEqual(updated);
    expect(await events()).toBe(before);
  });

  it('forked_from_project_id: the fork lands in namespace_id, reaches finished, then takes the rest', async () => {
    const source = await create(user.token, { name: 'tf-source', initialize_with_readme: true });
    const group = await createGroup(t);
    // An owner: the provider's PUT sends `name` and `visibility`, GitLab's owner rights.
    await addGroupMember(t, group.id, user.id, 50);
    const fork = await as(user.token)
      .post(`/projects/${source.id}/fork`)
      .send({ namespace_id: group.id, name: 'tf-fork', path: 'tf-fork', description: 'a fork', visibility: 'private' });
    expect(fork.status).toBe(201);
    expect(fork.body.namespace.id).toBe(group.id);
    const id = fork.body.id as number;
    const finished = await eventually(async () => {
      const res = await as(user.token).get(`/projects/${id}/import`);
      expect(res.status).toBe(200);
      expect(['scheduled', 'started', 'finished']).toContain(res.body.import_status);
      // The provider's StateChangeConf: Pending scheduled and started, Target finished.
      expect(res.body.import_status).toBe('finished');
      return res.body as Record<string, unknown>;
    });
    expect(finished).toMatchObject({ id, import_status: 'finished', import_error: null });
    const put = await as(user.token)
      .put(`/projects/${id}`)
      .send({ ...CREATE_DEFAULTS, topics: ['forked'] });
    expect(put.status).toBe(200);
    const read1 = await read(user.token, id);
    expect(read1.forked_from_project.id).toBe(source.id);
    expect(state(read1)).toMatchObject(
      expected({ name: 'tf-fork', path: 'tf-fork', namespace_id: group.id, description: 'a fork', topics: ['forked'] }),
    );
    // The fork's repository holds the source's README.
    const readme = await as(user.token).get(`/projects/${id}/repository/files/README.md/raw?ref=master`);
    expect(readme.status).toBe(200);
  });

  it('a namespace_id change is a transfer with the id as a JSON number, then a read', async () => {
    const p = await create(user.token, { name: 'tf-moving' });
    const group = await createGroup(t);
    await addGroupMember(t, group.id, user.id, 40);
    const moved = await as(user.token).put(`/projects/${p.id}/transfer`).send({ namespace: group.id });
    expect(moved.status).toBe(200);
    const after = await read(user.token, p.id);
    expect(state(after)).toMatchObject(expected({ name: 'tf-moving', namespace_id: group.id }));
  });
});
