import type { DeployKeyRow, ProjectDeployKeyRow } from './deploy-key.queries';

/** GitLab's SSHKey entity: `GET /deploy_keys` and the answer of `POST .../enable`. */
export const serializeDeployKey = (k: DeployKeyRow) => ({
  id: k.id,
  title: k.title,
  key: k.key,
  created_at: new Date(k.created_at).toISOString(),
});

/** GitLab's DeployKeysProject entity: the key merged with this project's `can_push`. */
export const serializeProjectDeployKey = (k: ProjectDeployKeyRow) => ({
  ...serializeDeployKey(k),
  can_push: k.can_push,
});
