/** GitLab's access levels. Project members stop at maintainer in 10.x; group members may be owners. */
export const ACCESS = { none: 0, guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export const GROUP_ACCESS_LEVELS: number[] = [
  ACCESS.guest,
  ACCESS.reporter,
  ACCESS.developer,
  ACCESS.maintainer,
  ACCESS.owner,
];
export const PROJECT_ACCESS_LEVELS: number[] = [ACCESS.guest, ACCESS.reporter, ACCESS.developer, ACCESS.maintainer];

export type Visibility = 'private' | 'internal' | 'public';
export const VISIBILITIES: Visibility[] = ['private', 'internal', 'public'];
const RANK: Record<Visibility, number> = { private: 0, internal: 10, public: 20 };
/** GitLab's visibility_level numbers, used in hook payloads and comparisons. */
export const visibilityLevel = (v: Visibility) => RANK[v];
export const moreOpenThan = (a: Visibility, b: Visibility) => RANK[a] > RANK[b];
