import { ACCESS_LEVEL_DESCRIPTIONS } from './protected-branch';
import type { ProtectedTagRule } from './protected-tag';

/**
 * GitLab 11.3's ProtectedTag entity: `name` and one create level. The level's description uses the
 * words Lode's protected branches answer (10.x's "Masters"; 11.x says "Maintainers"), so one instance
 * speaks one vocabulary.
 */
export const serializeProtectedTag = (r: ProtectedTagRule) => ({
  name: r.name,
  create_access_levels: [
    {
      access_level: r.createAccessLevel,
      access_level_description: ACCESS_LEVEL_DESCRIPTIONS[r.createAccessLevel],
    },
  ],
});
