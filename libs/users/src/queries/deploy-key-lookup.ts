/** A deploy key as `GET /keys` shows it: the key, who added it, and the projects it is enabled on. */
export interface InstanceDeployKey {
  id: number;
  title: string;
  key: string;
  createdAt: Date;
  /** The user who added it; null once that user is gone for good. */
  userId: number | null;
  /** Its links to projects (GitLab's `deploy_keys_projects` rows), in the order they were made. */
  projects: DeployKeyProjectLink[];
}

export interface DeployKeyProjectLink {
  deployKeyId: number;
  projectId: number;
  canPush: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * GitLab keeps users' keys and deploy keys in one `keys` table, so `GET /keys?fingerprint=` and
 * `GET /keys/:id` find either. Deploy keys belong to the projects context, to the right of users: it
 * implements this port, and users' keys controller asks it for a key it did not find among users' keys.
 */
export abstract class DeployKeyLookup {
  /** The deploy key with this MD5 (lower-case `aa:bb:...`) or `SHA256:<base64>` fingerprint. */
  abstract byFingerprint(fingerprint: { md5: string } | { sha256: string }): Promise<InstanceDeployKey | undefined>;
  /** The deploy key with this id. */
  abstract byId(id: number): Promise<InstanceDeployKey | undefined>;
}
